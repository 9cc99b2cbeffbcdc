# Third-party libraries, all from the distribution's packages (ci/setup.sh installs them).
find_package(Threads REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(doctest REQUIRED)
# yaml-cpp 0.7's package names its target "yaml-cpp"; 0.8 adds "yaml-cpp::yaml-cpp".
if(NOT TARGET yaml-cpp::yaml-cpp)
  add_library(yaml-cpp::yaml-cpp ALIAS yaml-cpp)
endif()
# libpq, for the fleet server (`attnprof push`, `pull`: harness/store/server.h). Optional: a
# machine without libpq-dev builds attnprof all the same, and those commands say it was built
# without PostgreSQL. -DATTNPROF_POSTGRES=OFF leaves it out where it is installed.
option(ATTNPROF_POSTGRES "Build the PostgreSQL client (attnprof push, pull) when libpq is found" ON)
if(ATTNPROF_POSTGRES)
  find_package(PostgreSQL QUIET)
endif()
if(TARGET PostgreSQL::PostgreSQL)
  message(STATUS "attnprof: PostgreSQL client (libpq ${PostgreSQL_VERSION_STRING}) for push and pull")
else()
  message(STATUS "attnprof: built without PostgreSQL (no libpq-dev): push and pull will say so")
endif()

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

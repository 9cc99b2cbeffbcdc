-- Rows for tests/data/db/v1.db. make-v1.sh builds that file from this and the v1 DDL in
-- harness/store/schema.cpp (the first migration), then sets user_version = 1.
INSERT INTO environments VALUES ('00000000000000e1', '{"cpu.model":"Fixture CPU","device.name":"cpu"}');
INSERT INTO runs VALUES ('11111111-1111-4111-8111-111111111111', 'aaaa000', 'main',
  1700000000000000000, 1700000001000000000, 'complete', '00000000000000e1');
INSERT INTO runs VALUES ('22222222-2222-4222-8222-222222222222', 'bbbb000', 'main',
  1700000100000000000, 1700000101000000000, 'complete', '00000000000000e1');
INSERT INTO cases VALUES (1, '11111111-1111-4111-8111-111111111111', 'm/prefill/b1/cpu.naive',
  'cpu.naive', '{"key":"m/prefill/b1/cpu.naive","kernel":"cpu.naive","batch":1,"dtype":"fp32"}',
  'ok', '');
INSERT INTO cases VALUES (2, '22222222-2222-4222-8222-222222222222', 'm/prefill/b1/cpu.naive',
  'cpu.naive', '{"key":"m/prefill/b1/cpu.naive","kernel":"cpu.naive","batch":1,"dtype":"fp32"}',
  'ok', '');
INSERT INTO samples VALUES (1, 0, 1000, 1700000000100000000, NULL, 0);
INSERT INTO samples VALUES (1, 1, 1100, 1700000000200000000, NULL, 0);
INSERT INTO samples VALUES (2, 0, 1200, 1700000100100000000, 1980.0, 0);
INSERT INTO summaries VALUES (1, 2, 1050, 1050, 1000, 1100, 1025, 1075, 1000, 1100, 0.95, 0);
INSERT INTO summaries VALUES (2, 1, 1200, 1200, 1200, 1200, 1200, 1200, 1200, 1200, 0.95, 0);
INSERT INTO cost_rows VALUES (1, 0, 'aten::bmm', '[[1,2,3]]', '', 2, 500, 600, 0, 0, 0.5, 64);

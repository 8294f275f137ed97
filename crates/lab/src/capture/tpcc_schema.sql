-- TPC-C schema, population and transaction profiles for `flashlab capture pg-tpcc`.
-- Follows the TPC-C Standard Specification, Revision 5.11 (TPC, February 2010):
--   clause 1.3 (table layouts), 1.4 (primary keys), 4.3.3.1 (initial population),
--   2.1.6 (NURand), 2.4 New-Order, 2.5 Payment, 2.6 Order-Status, 2.7 Delivery, 2.8 Stock-Level.
-- Row counts are the specification's for every warehouse (no scaling down). Random strings
-- are built from md5() hex digits at the specification's lengths (the character set differs,
-- sizes do not); the 10 % "ORIGINAL" and C_CREDIT "BC" shares are kept.
-- :W is the number of warehouses and :seed the population seed (psql variables).

SELECT setseed(:seed / 2147483648.0);

CREATE FUNCTION tpcc_astr(lo int, hi int) RETURNS text LANGUAGE sql AS $$
  SELECT left(repeat(md5(random()::text), 16), lo + floor(random() * (hi - lo + 1))::int) $$;
CREATE FUNCTION tpcc_rand(lo int, hi int) RETURNS int LANGUAGE sql AS $$
  SELECT lo + floor(random() * (hi - lo + 1))::int $$;
-- 2.1.6: NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x
CREATE FUNCTION tpcc_nurand(a int, x int, y int, c int) RETURNS int LANGUAGE sql AS $$
  SELECT (((tpcc_rand(0, a) | tpcc_rand(x, y)) + c) % (y - x + 1)) + x $$;
-- 4.3.2.3: C_LAST from three syllables of a number 0..999.
CREATE FUNCTION tpcc_last(n int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT s[n / 100 + 1] || s[n / 10 % 10 + 1] || s[n % 10 + 1]
  FROM (SELECT ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'] AS s) t $$;
CREATE FUNCTION tpcc_data() RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN random() < 0.1 THEN overlay(d placing 'ORIGINAL' from 1 + floor(random() * (length(d) - 8))::int)
              ELSE d END FROM (SELECT tpcc_astr(26, 50) AS d) t $$;

CREATE TABLE warehouse (w_id int, w_name varchar(10), w_street_1 varchar(20),
  w_street_2 varchar(20), w_city varchar(20), w_state char(2), w_zip char(9),
  w_tax numeric(4,4), w_ytd numeric(12,2));
CREATE TABLE district (d_id int, d_w_id int, d_name varchar(10), d_street_1 varchar(20),
  d_street_2 varchar(20), d_city varchar(20), d_state char(2), d_zip char(9),
  d_tax numeric(4,4), d_ytd numeric(12,2), d_next_o_id int);
CREATE TABLE customer (c_id int, c_d_id int, c_w_id int, c_first varchar(16), c_middle char(2),
  c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20),
  c_state char(2), c_zip char(9), c_phone char(16), c_since timestamp, c_credit char(2),
  c_credit_lim numeric(12,2), c_discount numeric(4,4), c_balance numeric(12,2),
  c_ytd_payment numeric(12,2), c_payment_cnt int, c_delivery_cnt int, c_data varchar(500));
CREATE TABLE history (h_c_id int, h_c_d_id int, h_c_w_id int, h_d_id int, h_w_id int,
  h_date timestamp, h_amount numeric(6,2), h_data varchar(24));
CREATE TABLE orders (o_id int, o_d_id int, o_w_id int, o_c_id int, o_entry_d timestamp,
  o_carrier_id int, o_ol_cnt int, o_all_local int);
CREATE TABLE new_order (no_o_id int, no_d_id int, no_w_id int);
CREATE TABLE order_line (ol_o_id int, ol_d_id int, ol_w_id int, ol_number int, ol_i_id int,
  ol_supply_w_id int, ol_delivery_d timestamp, ol_quantity int, ol_amount numeric(6,2),
  ol_dist_info char(24));
CREATE TABLE item (i_id int, i_im_id int, i_name varchar(24), i_price numeric(5,2),
  i_data varchar(50));
CREATE TABLE stock (s_i_id int, s_w_id int, s_quantity int, s_dist_01 char(24),
  s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24),
  s_dist_06 char(24), s_dist_07 char(24), s_dist_08 char(24), s_dist_09 char(24),
  s_dist_10 char(24), s_ytd int, s_order_cnt int, s_remote_cnt int, s_data varchar(50));

INSERT INTO item SELECT i, tpcc_rand(1, 10000), tpcc_astr(14, 24), tpcc_rand(100, 10000) / 100.0,
  tpcc_data() FROM generate_series(1, 100000) i;
INSERT INTO warehouse SELECT w, tpcc_astr(6, 10), tpcc_astr(10, 20), tpcc_astr(10, 20),
  tpcc_astr(10, 20), tpcc_astr(2, 2), tpcc_astr(4, 4) || '11111', tpcc_rand(0, 2000) / 10000.0,
  300000 FROM generate_series(1, :W) w;
INSERT INTO district SELECT d, w, tpcc_astr(6, 10), tpcc_astr(10, 20), tpcc_astr(10, 20),
  tpcc_astr(10, 20), tpcc_astr(2, 2), tpcc_astr(4, 4) || '11111', tpcc_rand(0, 2000) / 10000.0,
  30000, 3001 FROM generate_series(1, :W) w, generate_series(1, 10) d;
INSERT INTO stock SELECT i, w, tpcc_rand(10, 100), tpcc_astr(24, 24), tpcc_astr(24, 24),
  tpcc_astr(24, 24), tpcc_astr(24, 24), tpcc_astr(24, 24), tpcc_astr(24, 24), tpcc_astr(24, 24),
  tpcc_astr(24, 24), tpcc_astr(24, 24), tpcc_astr(24, 24), 0, 0, 0, tpcc_data()
  FROM generate_series(1, :W) w, generate_series(1, 100000) i;
INSERT INTO customer SELECT c, d, w, tpcc_astr(8, 16), 'OE',
  tpcc_last(CASE WHEN c <= 1000 THEN c - 1 ELSE tpcc_nurand(255, 0, 999, 157) END),
  tpcc_astr(10, 20), tpcc_astr(10, 20), tpcc_astr(10, 20), tpcc_astr(2, 2),
  tpcc_astr(4, 4) || '11111', tpcc_astr(16, 16), now(),
  CASE WHEN random() < 0.1 THEN 'BC' ELSE 'GC' END, 50000, tpcc_rand(0, 5000) / 10000.0,
  -10, 10, 1, 0, tpcc_astr(300, 500)
  FROM generate_series(1, :W) w, generate_series(1, 10) d, generate_series(1, 3000) c;
INSERT INTO history SELECT c, d, w, d, w, now(), 10, tpcc_astr(12, 24)
  FROM generate_series(1, :W) w, generate_series(1, 10) d, generate_series(1, 3000) c;
-- 4.3.3.1: O_C_ID a permutation of 1..3000; orders 2101..3000 undelivered (in NEW-ORDER).
INSERT INTO orders SELECT o, d, w, p.c, now(), CASE WHEN o < 2101 THEN tpcc_rand(1, 10) END,
  tpcc_rand(5, 15), 1
  FROM generate_series(1, :W) w, generate_series(1, 10) d,
  LATERAL (SELECT row_number() OVER (ORDER BY random())::int AS o, c
           FROM generate_series(1, 3000) c) p;
INSERT INTO new_order SELECT o_id, o_d_id, o_w_id FROM orders WHERE o_id >= 2101;
INSERT INTO order_line SELECT o_id, o_d_id, o_w_id, n, tpcc_rand(1, 100000), o_w_id,
  CASE WHEN o_id < 2101 THEN o_entry_d END, 5,
  CASE WHEN o_id < 2101 THEN 0 ELSE tpcc_rand(1, 999999) / 100.0 END, tpcc_astr(24, 24)
  FROM orders, generate_series(1, 15) n WHERE n <= o_ol_cnt;
-- Keys and indexes after the rows: one sort each instead of one index insertion per row.
SET maintenance_work_mem = '256MB';
ALTER TABLE warehouse ADD PRIMARY KEY (w_id);
ALTER TABLE district ADD PRIMARY KEY (d_w_id, d_id);
ALTER TABLE customer ADD PRIMARY KEY (c_w_id, c_d_id, c_id);
ALTER TABLE orders ADD PRIMARY KEY (o_w_id, o_d_id, o_id);
ALTER TABLE new_order ADD PRIMARY KEY (no_w_id, no_d_id, no_o_id);
ALTER TABLE order_line ADD PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number);
ALTER TABLE item ADD PRIMARY KEY (i_id);
ALTER TABLE stock ADD PRIMARY KEY (s_w_id, s_i_id);
CREATE INDEX customer_last ON customer (c_w_id, c_d_id, c_last, c_first);
CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id);

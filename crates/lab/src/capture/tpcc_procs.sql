-- The five TPC-C transaction profiles (TPC-C Standard Specification, Revision 5.11, clauses
-- 2.4-2.8) as PL/pgSQL functions the driver calls, one call per transaction. Each returns one
-- text row ('ok', 'rollback' or 'error: ...') and never raises, so the driver reads exactly one
-- line per call. The EXCEPTION block rolls back the transaction's work on the 1 % New-Order
-- rollbacks (2.4.1.4, an unused item id) and on deadlocks.

-- 2.4 New-Order. Items are taken in item-id order so that concurrent terminals lock stock rows
-- in one order (no deadlock cycle).
CREATE FUNCTION tpcc_new_order(w int, d int, c int, items int[], supply int[], qty int[])
RETURNS text LANGUAGE plpgsql AS $$
DECLARE o int; n int := array_length(items, 1); i int; price numeric; sq int; dist text;
        all_local int := 1; disc numeric; wtax numeric; dtax numeric;
BEGIN
  BEGIN
    SELECT c_discount INTO disc FROM customer WHERE c_w_id = w AND c_d_id = d AND c_id = c;
    SELECT w_tax INTO wtax FROM warehouse WHERE w_id = w;
    UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = w AND d_id = d
      RETURNING d_next_o_id - 1, d_tax INTO o, dtax;
    FOR i IN 1..n LOOP IF supply[i] <> w THEN all_local := 0; END IF; END LOOP;
    INSERT INTO orders VALUES (o, d, w, c, now(), NULL, n, all_local);
    INSERT INTO new_order VALUES (o, d, w);
    FOR i IN 1..n LOOP
      SELECT i_price INTO price FROM item WHERE i_id = items[i];
      IF NOT FOUND THEN RAISE EXCEPTION 'tpcc rollback' USING ERRCODE = 'P0001'; END IF;
      EXECUTE format('SELECT s_quantity, s_dist_%s FROM stock WHERE s_w_id = $1 AND s_i_id = $2',
                     lpad(d::text, 2, '0')) INTO sq, dist USING supply[i], items[i];
      UPDATE stock SET s_quantity = CASE WHEN sq - qty[i] >= 10 THEN sq - qty[i] ELSE sq - qty[i] + 91 END,
        s_ytd = s_ytd + qty[i], s_order_cnt = s_order_cnt + 1,
        s_remote_cnt = s_remote_cnt + CASE WHEN supply[i] <> w THEN 1 ELSE 0 END
        WHERE s_w_id = supply[i] AND s_i_id = items[i];
      INSERT INTO order_line VALUES (o, d, w, i, items[i], supply[i], NULL, qty[i],
        qty[i] * price * (1 + wtax + dtax) * (1 - disc), dist);
    END LOOP;
  EXCEPTION
    WHEN raise_exception THEN RETURN 'rollback';
    WHEN OTHERS THEN RETURN 'error: ' || SQLERRM;
  END;
  RETURN 'ok';
END $$;

-- 2.5 Payment; by last name (60 %) the customer at position ceil(n / 2) in C_FIRST order.
CREATE FUNCTION tpcc_payment(w int, d int, cw int, cd int, c int, clast text, amount numeric)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE cid int := c; credit text; wname text; dname text;
BEGIN
  BEGIN
    UPDATE warehouse SET w_ytd = w_ytd + amount WHERE w_id = w RETURNING w_name INTO wname;
    UPDATE district SET d_ytd = d_ytd + amount WHERE d_w_id = w AND d_id = d RETURNING d_name INTO dname;
    IF clast IS NOT NULL THEN
      SELECT c_id INTO cid FROM customer WHERE c_w_id = cw AND c_d_id = cd AND c_last = clast
        ORDER BY c_first OFFSET (SELECT (count(*) - 1) / 2 FROM customer
          WHERE c_w_id = cw AND c_d_id = cd AND c_last = clast) LIMIT 1;
      IF NOT FOUND THEN RETURN 'ok'; END IF;
    END IF;
    UPDATE customer SET c_balance = c_balance - amount, c_ytd_payment = c_ytd_payment + amount,
      c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = cw AND c_d_id = cd AND c_id = cid
      RETURNING c_credit INTO credit;
    IF credit = 'BC' THEN
      UPDATE customer SET c_data = left(cid || ' ' || cd || ' ' || cw || ' ' || d || ' ' || w
        || ' ' || amount || ' ' || c_data, 500) WHERE c_w_id = cw AND c_d_id = cd AND c_id = cid;
    END IF;
    INSERT INTO history VALUES (cid, cd, cw, d, w, now(), amount, wname || '    ' || dname);
  EXCEPTION WHEN OTHERS THEN RETURN 'error: ' || SQLERRM;
  END;
  RETURN 'ok';
END $$;

-- 2.6 Order-Status (read only).
CREATE FUNCTION tpcc_order_status(w int, d int, c int, clast text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE cid int := c; o int; bal numeric; lines int;
BEGIN
  IF clast IS NOT NULL THEN
    SELECT c_id INTO cid FROM customer WHERE c_w_id = w AND c_d_id = d AND c_last = clast
      ORDER BY c_first OFFSET (SELECT (count(*) - 1) / 2 FROM customer
        WHERE c_w_id = w AND c_d_id = d AND c_last = clast) LIMIT 1;
    IF NOT FOUND THEN RETURN 'ok'; END IF;
  END IF;
  SELECT c_balance INTO bal FROM customer WHERE c_w_id = w AND c_d_id = d AND c_id = cid;
  SELECT o_id INTO o FROM orders WHERE o_w_id = w AND o_d_id = d AND o_c_id = cid
    ORDER BY o_id DESC LIMIT 1;
  SELECT count(*) INTO lines FROM order_line WHERE ol_w_id = w AND ol_d_id = d AND ol_o_id = o;
  RETURN 'ok';
END $$;

-- 2.7 Delivery: the oldest undelivered order of each of the ten districts.
CREATE FUNCTION tpcc_delivery(w int, carrier int)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE d int; o int; c int; total numeric;
BEGIN
  BEGIN
    FOR d IN 1..10 LOOP
      SELECT no_o_id INTO o FROM new_order WHERE no_w_id = w AND no_d_id = d
        ORDER BY no_o_id LIMIT 1 FOR UPDATE SKIP LOCKED;
      CONTINUE WHEN NOT FOUND;
      DELETE FROM new_order WHERE no_w_id = w AND no_d_id = d AND no_o_id = o;
      UPDATE orders SET o_carrier_id = carrier WHERE o_w_id = w AND o_d_id = d AND o_id = o
        RETURNING o_c_id INTO c;
      UPDATE order_line SET ol_delivery_d = now() WHERE ol_w_id = w AND ol_d_id = d AND ol_o_id = o;
      SELECT sum(ol_amount) INTO total FROM order_line WHERE ol_w_id = w AND ol_d_id = d AND ol_o_id = o;
      UPDATE customer SET c_balance = c_balance + total, c_delivery_cnt = c_delivery_cnt + 1
        WHERE c_w_id = w AND c_d_id = d AND c_id = c;
    END LOOP;
  EXCEPTION WHEN OTHERS THEN RETURN 'error: ' || SQLERRM;
  END;
  RETURN 'ok';
END $$;

-- 2.8 Stock-Level (read only): items of the district's last 20 orders below the threshold.
CREATE FUNCTION tpcc_stock_level(w int, d int, threshold int)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE o int; low int;
BEGIN
  SELECT d_next_o_id INTO o FROM district WHERE d_w_id = w AND d_id = d;
  SELECT count(DISTINCT s_i_id) INTO low FROM order_line, stock
    WHERE ol_w_id = w AND ol_d_id = d AND ol_o_id < o AND ol_o_id >= o - 20
      AND s_w_id = w AND s_i_id = ol_i_id AND s_quantity < threshold;
  RETURN 'ok';
END $$;

-- The example book's table: one row per (host, backend). Any change to it notifies the
-- `switchboard` channel once per statement; the book reloads the whole table on a notification.
CREATE TABLE IF NOT EXISTS switchboard_backends (
  host    text    NOT NULL,              -- lower-case host name, as requests carry it
  address text    NOT NULL,              -- host:port
  weight  integer NOT NULL DEFAULT 1 CHECK (weight >= 0),
  PRIMARY KEY (host, address)
);

CREATE OR REPLACE FUNCTION switchboard_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('switchboard', TG_OP);
  RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS switchboard_backends_changed ON switchboard_backends;
CREATE TRIGGER switchboard_backends_changed
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON switchboard_backends
  FOR EACH STATEMENT EXECUTE FUNCTION switchboard_notify();

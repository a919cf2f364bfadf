-- Tables the Hive 2.3 metastore's lock and transaction handler (TxnHandler) reads and writes over
-- plain JDBC. DataNucleus (datanucleus.schema.autoCreateAll) creates the catalog tables (DBS, TBLS,
-- ...) but not these, and hive-metastore-2.3.9.jar ships no schema scripts; without them every
-- Iceberg commit with Hive locks enabled retries `lock` until it gives up.
-- Column names and types follow the metastore's 2.3 schema; identifiers are unquoted, so
-- PostgreSQL folds them to lower case, as the handler's unquoted SQL expects.
-- Idempotent: `late-data cluster up` applies it on every start.

create table if not exists txns (
    txn_id bigint primary key,
    txn_state char(1) not null,
    txn_started bigint not null,
    txn_last_heartbeat bigint not null,
    txn_user varchar(128) not null,
    txn_host varchar(128) not null,
    txn_agent_info varchar(128),
    txn_meta_info varchar(128),
    txn_heartbeat_count integer
);

create table if not exists txn_components (
    tc_txnid bigint references txns (txn_id),
    tc_database varchar(128) not null,
    tc_table varchar(128),
    tc_partition varchar(767),
    tc_operation_type char(1) not null
);
create index if not exists tc_txnid_index on txn_components using hash (tc_txnid);

create table if not exists completed_txn_components (
    ctc_txnid bigint,
    ctc_database varchar(128) not null,
    ctc_table varchar(256),
    ctc_partition varchar(767)
);

create table if not exists next_txn_id (ntxn_next bigint not null);
insert into next_txn_id select 1 where not exists (select 1 from next_txn_id);

create table if not exists hive_locks (
    hl_lock_ext_id bigint not null,
    hl_lock_int_id bigint not null,
    hl_txnid bigint,
    hl_db varchar(128) not null,
    hl_table varchar(128),
    hl_partition varchar(767),
    hl_lock_state char(1) not null,
    hl_lock_type char(1) not null,
    hl_last_heartbeat bigint not null,
    hl_acquired_at bigint,
    hl_user varchar(128) not null,
    hl_host varchar(128) not null,
    hl_heartbeat_count integer,
    hl_agent_info varchar(128),
    hl_blockedby_ext_id bigint,
    hl_blockedby_int_id bigint,
    primary key (hl_lock_ext_id, hl_lock_int_id)
);
create index if not exists hl_txnid_index on hive_locks using hash (hl_txnid);

create table if not exists next_lock_id (nl_next bigint not null);
insert into next_lock_id select 1 where not exists (select 1 from next_lock_id);

create table if not exists compaction_queue (
    cq_id bigint primary key,
    cq_database varchar(128) not null,
    cq_table varchar(128) not null,
    cq_partition varchar(767),
    cq_state char(1) not null,
    cq_type char(1) not null,
    cq_tblproperties varchar(2048),
    cq_worker_id varchar(128),
    cq_start bigint,
    cq_run_as varchar(128),
    cq_highest_txn_id bigint,
    cq_meta_info bytea,
    cq_hadoop_job_id varchar(32)
);

create table if not exists next_compaction_queue_id (ncq_next bigint not null);
insert into next_compaction_queue_id select 1 where not exists (select 1 from next_compaction_queue_id);

create table if not exists completed_compactions (
    cc_id bigint primary key,
    cc_database varchar(128) not null,
    cc_table varchar(128) not null,
    cc_partition varchar(767),
    cc_state char(1) not null,
    cc_type char(1) not null,
    cc_tblproperties varchar(2048),
    cc_worker_id varchar(128),
    cc_start bigint,
    cc_end bigint,
    cc_run_as varchar(128),
    cc_highest_txn_id bigint,
    cc_meta_info bytea,
    cc_hadoop_job_id varchar(32)
);

-- Row locks on this table serialise the handler's lock checks across metastore processes.
create table if not exists aux_table (
    mt_key1 varchar(128) not null,
    mt_key2 bigint not null,
    mt_comment varchar(255),
    primary key (mt_key1, mt_key2)
);

create table if not exists write_set (
    ws_database varchar(128) not null,
    ws_table varchar(128) not null,
    ws_partition varchar(767),
    ws_txnid bigint not null,
    ws_commit_id bigint not null,
    ws_operation_type char(1) not null
);

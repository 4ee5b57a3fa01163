-- Model placements (macfleet model place, POST /api/v1/clusters/{c}/model-placements, node deploy's fan-out; issue 27)
-- kept in the database so their answers survive a restart. state is ModelPlacementState's name; a running placement
-- refreshes heartbeat_at every few seconds, so one whose process went away reads as interrupted, not running.
-- Plain SQL that runs on H2 and PostgreSQL, like V11_27.
create table model_placement (
    id varchar(36) primary key,
    cluster varchar(200) not null,
    model_name varchar(100) not null,
    state varchar(20) not null,
    started_by varchar(200) not null,
    started_at timestamp with time zone not null,
    heartbeat_at timestamp with time zone not null,
    finished_at timestamp with time zone,
    total_bytes bigint not null,
    bytes_from_control_host bigint not null,
    error varchar(2000)
);
create index model_placement_cluster on model_placement (cluster, started_at);
-- One Mac of a placement: bytes written so far (at most about a second old while it runs), its outcome once known.
create table model_placement_machine (
    placement_id varchar(36) not null references model_placement (id) on delete cascade,
    machine varchar(200) not null,
    outcome varchar(20),
    bytes_written bigint not null,
    bytes_resent bigint not null,
    message varchar(2000),
    primary key (placement_id, machine)
);
-- Where a catalogue model lies verified: one row per Mac and file, written when a placement (or the deploy that ran
-- it) saw the Mac's SHA-256 equal the catalogue's. Removing the model removes its rows.
create table model_placed_file (
    model_name varchar(100) not null references model_catalogue (name) on delete cascade,
    cluster varchar(200) not null,
    machine varchar(200) not null,
    path varchar(1000) not null,
    remote_path varchar(1000) not null,
    sha256 varchar(64) not null,
    verified_at timestamp with time zone not null,
    verified_by varchar(200) not null,
    primary key (model_name, cluster, machine, path)
);

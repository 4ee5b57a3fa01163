-- The desired state applied from the inventory (macfleet inventory apply). Each row keeps the resolved
-- entry as a JSON document (what plan compares field by field) plus the columns queries filter on.
create table inventory_cluster (
    name varchar(100) not null primary key,
    macos_version varchar(20) not null,
    topology_kind varchar(20) not null,
    document varchar(1000000) not null,
    updated_at timestamp with time zone not null
);

create table inventory_machine (
    name varchar(100) not null primary key,
    address varchar(255) not null,
    ssh_port integer not null,
    cluster_name varchar(100),
    machine_role varchar(20) not null,
    document varchar(1000000) not null,
    updated_at timestamp with time zone not null
);

create index inventory_machine_cluster on inventory_machine (cluster_name);

-- One row, locked (select ... for update) by an apply so that two applies run one after the other.
create table inventory_lock (
    id integer not null primary key
);
insert into inventory_lock (id) values (1);

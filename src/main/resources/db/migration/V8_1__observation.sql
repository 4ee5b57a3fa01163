-- What the service knows about reaching each machine, apart from its facts (issue 13): when it last answered, since
-- when it does not, and the last error. One row per machine, updated by every gathering (the observation loop of
-- `macfleet serve`, `macfleet facts`, provisioning checks); facts themselves stay in machine_facts.
create table machine_observation (
    machine varchar(100) primary key,
    last_attempt_at timestamp with time zone not null,
    last_seen_at timestamp with time zone,
    unreachable_since timestamp with time zone,
    last_error varchar(4000),
    observed_by varchar(200) not null
);

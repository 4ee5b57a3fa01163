-- The node supervisor's latest look at each cluster, shared by every `macfleet serve` on one database: one row per
-- cluster, written after each look by the instance that holds the cluster's supervision lease (observed_by names it),
-- read by all of them, so that every console, API and CLI answers the same. The document is the status as JSON
-- (SupervisionStatusStore.Document: the diagnosis by type name, never a class name). The row goes when the cluster
-- leaves the inventory or has no finished deployment.
create table supervision_status (
    cluster varchar(100) primary key,
    observed_at timestamp with time zone not null,
    observed_by varchar(200) not null,
    document varchar(1000000) not null
);

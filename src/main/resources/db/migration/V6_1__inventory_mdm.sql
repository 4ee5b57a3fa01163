-- The MDM server of the applied inventory (at most one row, named 'server'), kept like the clusters and machines:
-- the resolved entry as a JSON document that plan compares field by field. The API token stays a reference.
create table inventory_mdm (
    name varchar(100) not null primary key,
    document varchar(100000) not null,
    updated_at timestamp with time zone not null
);

-- The model catalogue (macfleet model add/list/show/remove, issue 27): one row per model, named as the inventory's
-- inference.model names it, and one row per file with its size and SHA-256 (verified when the bytes were stored under
-- macfleet.home/models/NAME/). The shape columns (layers, key-value heads, head size, trained context) come from the
-- GGUF header or MLX config.json and feed the memory fit; 0 when the model does not state them.
create table model_catalogue (
    name varchar(100) primary key,
    format varchar(10) not null,
    architecture varchar(100) not null,
    quantization varchar(50) not null,
    total_bytes bigint not null,
    runtimes varchar(200) not null,
    source varchar(2000) not null,
    weights varchar(1000),
    layers integer not null,
    key_value_heads integer not null,
    head_dimension integer not null,
    context_length integer not null,
    added_by varchar(200) not null,
    added_at timestamp with time zone not null
);
create table model_file (
    model_name varchar(100) not null references model_catalogue (name) on delete cascade,
    path varchar(1000) not null,
    size bigint not null,
    sha256 varchar(64) not null,
    primary key (model_name, path)
);

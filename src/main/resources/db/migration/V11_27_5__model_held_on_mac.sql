-- model add --via MACHINE (issue 27): a model downloaded on a Mac is held there, not under macfleet.home/models on the
-- control host; null for models the control host holds (every model before this column).
alter table model_catalogue add column held_on varchar(200);

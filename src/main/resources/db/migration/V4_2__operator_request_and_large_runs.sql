-- The walkthrough of a step that waits for a person (title, numbered instructions, what they will see, how long
-- to wait, what is still wrong), as JSON, so that the console shows the same walkthrough as the CLI prompt.
-- Null for every step that is not waiting for a person.
alter table provisioning_step add column operator_request varchar(8000);

-- A run over a whole fleet names every machine: a thousand names do not fit in 8000 characters. (The run's target
-- key stays short: past 1000 characters its machine list is replaced by a SHA-256 of it, see ProvisioningService.)
alter table provisioning_run alter column machines set data type varchar(1000000);

-- The console's overview asks, on every refresh, for each machine's newest run: by machine, then run.
create index provisioning_step_machine_run on provisioning_step (machine, run_id);

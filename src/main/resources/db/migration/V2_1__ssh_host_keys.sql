-- Host key fingerprints recorded on first contact (trust on first use when the operator allows it).
-- One row per machine; a changed key is never written over, the operator removes the row explicitly
-- (macfleet ssh forget-host-key MACHINE) after verifying the new key out of band.
CREATE TABLE ssh_host_keys (
    machine     VARCHAR(255) NOT NULL PRIMARY KEY,
    address     VARCHAR(300) NOT NULL,
    key_type    VARCHAR(64)  NOT NULL,
    fingerprint VARCHAR(80)  NOT NULL,
    recorded_at TIMESTAMP WITH TIME ZONE NOT NULL
);

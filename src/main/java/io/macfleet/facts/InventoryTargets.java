package io.macfleet.facts;

import io.macfleet.secrets.SecretReference;
import io.macfleet.ssh.SshTarget;
import java.util.Map;

/** How to reach a machine, rebuilt from its entry in the applied desired state (the stored inventory document). */
public final class InventoryTargets {

    private InventoryTargets() {
    }

    public static SshTarget target(Map<String, Object> machine) {
        String name = String.valueOf(machine.get("name"));
        Map<?, ?> ssh = machine.get("ssh") instanceof Map<?, ?> map ? map : Map.of();
        Object port = ssh.get("port");
        return new SshTarget(name, (String) machine.get("address"),
                port instanceof Number number ? number.intValue() : SshTarget.DEFAULT_PORT,
                ssh.get("user") instanceof String user ? user : io.macfleet.inventory.SshSettings.DEFAULT_USER,
                secret(ssh.get("privateKey"), name, "privateKey"), secret(ssh.get("passphrase"), name, "passphrase"),
                ssh.get("hostKey") instanceof String hostKey ? hostKey : null);
    }

    private static SecretReference secret(Object value, String machine, String field) {
        if (value == null) {
            return null;
        }
        return SecretReference.parse(String.valueOf(value)).orElseThrow(() -> new IllegalArgumentException(
                "ssh." + field + " of " + machine + " in the applied inventory is not a secret reference (env:NAME or file:PATH)"));
    }
}

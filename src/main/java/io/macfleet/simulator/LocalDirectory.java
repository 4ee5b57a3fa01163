package io.macfleet.simulator;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The local directory node ({@code dscl .}) of a simulated Mac: its users and groups with their attributes. It starts
 * with the accounts every Mac has (root, daemon, nobody, the wheel, staff and admin groups) and the SSH user; dscl
 * run as root adds records and attributes, as macOS's does (a record without UniqueID is not a usable account).
 */
final class LocalDirectory {

    private final Map<String, Map<String, List<String>>> users = new ConcurrentHashMap<>();
    private final Map<String, Map<String, List<String>>> groups = new ConcurrentHashMap<>();
    private final String sshUser;
    private final String volumeOwnerUser;

    LocalDirectory(String sshUser, String volumeOwnerUser) {
        this.sshUser = sshUser;
        this.volumeOwnerUser = volumeOwnerUser;
        clear();
    }

    /** Back to the accounts of a Mac as delivered. */
    synchronized void clear() {
        users.clear();
        groups.clear();
        user("root", 0, 0, "/var/root", "/bin/sh");
        user("daemon", 1, 1, "/var/root", "/usr/bin/false");
        user("nobody", -2, -2, "/var/empty", "/usr/bin/false");
        user(sshUser, 501, 20, "/Users/" + sshUser, "/bin/zsh");
        if (!volumeOwnerUser.equals(sshUser)) {
            user(volumeOwnerUser, 502, 20, "/Users/" + volumeOwnerUser, "/bin/zsh");
        }
        group("wheel", 0);
        group("daemon", 1);
        group("staff", 20);
        group("admin", 80);
        group("nobody", -2);
    }

    private void user(String name, int uid, int gid, String home, String shell) {
        Map<String, List<String>> record = new LinkedHashMap<>();
        record.put("RecordName", List.of(name));
        record.put("UniqueID", List.of(Integer.toString(uid)));
        record.put("PrimaryGroupID", List.of(Integer.toString(gid)));
        record.put("NFSHomeDirectory", List.of(home));
        record.put("UserShell", List.of(shell));
        users.put(name, record);
    }

    private void group(String name, int gid) {
        Map<String, List<String>> record = new LinkedHashMap<>();
        record.put("RecordName", List.of(name));
        record.put("PrimaryGroupID", List.of(Integer.toString(gid)));
        groups.put(name, record);
    }

    /** "/Users" or "/Groups". */
    Map<String, Map<String, List<String>>> records(String kind) {
        return switch (kind) {
            case "/Users" -> users;
            case "/Groups" -> groups;
            default -> throw new IllegalArgumentException("unknown record type " + kind);
        };
    }

    /** A user with a UniqueID (a record without one is no account). */
    Optional<Map<String, List<String>>> user(String name) {
        Map<String, List<String>> record = users.get(name);
        return record != null && record.containsKey("UniqueID") ? Optional.of(record) : Optional.empty();
    }

    /** The group name of a numeric id, for stat's %Sg. */
    Optional<String> groupNamed(String nameOrId) {
        if (groups.containsKey(nameOrId)) {
            return Optional.of(nameOrId);
        }
        return groups.entrySet().stream().filter(entry -> entry.getValue().getOrDefault("PrimaryGroupID", List.of()).contains(nameOrId))
                .map(Map.Entry::getKey).findFirst();
    }

    /** A user name given as a name or a numeric id. */
    Optional<String> userNamed(String nameOrId) {
        if (user(nameOrId).isPresent()) {
            return Optional.of(nameOrId);
        }
        return users.entrySet().stream().filter(entry -> entry.getValue().getOrDefault("UniqueID", List.of()).contains(nameOrId))
                .map(Map.Entry::getKey).findFirst();
    }

    /** dscl . -create PATH [KEY [VALUE...]]: the record, and the attribute replaced by the values. */
    synchronized void create(String kind, String name, Optional<String> key, List<String> values) {
        Map<String, List<String>> record = records(kind).computeIfAbsent(name, ignored -> {
            Map<String, List<String>> fresh = new LinkedHashMap<>();
            fresh.put("RecordName", List.of(name));
            return fresh;
        });
        key.ifPresent(attribute -> record.put(attribute, List.copyOf(values)));
    }
}

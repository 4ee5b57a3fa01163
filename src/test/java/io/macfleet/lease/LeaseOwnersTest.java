package io.macfleet.lease;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Whose lease may be taken over at once: only a process of this host that is gone. */
class LeaseOwnersTest {

    @Test
    void aGoneProcessOfThisHostIsDeadAndNothingElseIs() throws Exception {
        String mine = LeaseOwners.next();
        assertThat(mine).matches(ProcessHandle.current().pid() + "@.+/[0-9a-f]{8}");
        assertThat(LeaseOwners.next()).as("one owner per piece of work").isNotEqualTo(mine);
        assertThat(LeaseOwners.isDeadProcessOfThisHost(mine)).isFalse();

        Process finished = new ProcessBuilder("true").start();
        assertThat(finished.waitFor(30, TimeUnit.SECONDS)).isTrue();
        String host = mine.substring(mine.indexOf('@') + 1, mine.indexOf('/'));
        assertThat(LeaseOwners.isDeadProcessOfThisHost(finished.pid() + "@" + host + "/0123abcd")).isTrue();

        // Another host's process cannot be looked at from here, and a name of another form is nobody's.
        assertThat(LeaseOwners.isDeadProcessOfThisHost(finished.pid() + "@another-host." + host + "/0123abcd")).isFalse();
        assertThat(LeaseOwners.isDeadProcessOfThisHost("carol")).isFalse();
        assertThat(LeaseOwners.isDeadProcessOfThisHost(null)).isFalse();
    }
}

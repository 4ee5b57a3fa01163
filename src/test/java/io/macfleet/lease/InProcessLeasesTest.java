package io.macfleet.lease;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class InProcessLeasesTest {

    @Test
    void instancesOnOneDatabaseExcludeEachOtherAndOtherDatabasesAreIndependent() {
        InProcessLeases first = new InProcessLeases("jdbc:h2:mem:leases-a");
        InProcessLeases second = new InProcessLeases("jdbc:h2:mem:leases-a");
        InProcessLeases elsewhere = new InProcessLeases("jdbc:h2:mem:leases-b");

        Leases.Lease lease = first.tryAcquire("observe:studio-01").orElseThrow();
        assertThat(first.tryAcquire("observe:studio-01")).containsSame(lease);
        assertThat(second.tryAcquire("observe:studio-01")).isEmpty();
        assertThat(elsewhere.tryAcquire("observe:studio-01")).isPresent();

        lease.close();
        assertThat(lease.held()).isFalse();
        assertThat(second.tryAcquire("observe:studio-01")).isPresent();
        assertThat(first.tryAcquire("observe:studio-01")).isEmpty();

        second.close();
        assertThat(first.tryAcquire("observe:studio-01")).isPresent();
        first.close();
        elsewhere.close();
    }
}

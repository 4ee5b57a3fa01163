package io.macfleet.facts;

import javax.sql.DataSource;

/** Lets tests of other packages (the PostgreSQL one) run the facts storage contract. */
public final class FactsFromSamplesTestAccess {
    private FactsFromSamplesTestAccess() {
    }

    public static void latestAndHistory(DataSource dataSource) {
        FactsFromSamplesTest.FactsStoreContract.latestAndHistory(new FactsStore(dataSource));
    }
}

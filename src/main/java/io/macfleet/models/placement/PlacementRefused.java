package io.macfleet.models.placement;

/** A placement refused before any byte was sent (bad input, too little disk space): the message says what and where. */
public class PlacementRefused extends RuntimeException {
    public PlacementRefused(String message) {
        super(message);
    }
}

package io.macfleet.node;

/**
 * Entry point of the inference node. Placeholder until the engine lands.
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        System.out.println("inference-node: not yet implemented");
    }
}

package io.macfleet.node.tools;

import io.macfleet.node.grammar.Node;

import java.util.Map;

/** A function offered to the model: its declaration as the request gave it and its compiled parameters grammar. */
public record Tool(String name, Map<String, Object> declaration, Node parameters) {
}

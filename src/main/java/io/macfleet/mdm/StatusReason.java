package io.macfleet.mdm;

/**
 * One reason a device gives for a declaration's state ({@code code} such as {@code Error.UnknownDeclarationType} or
 * {@code Info.NotReferencedByActivation}, Apple's declarationbase.yaml lists them). {@code details} is the reason's
 * details dictionary as compact JSON text, or empty: its keys differ per code.
 */
public record StatusReason(String code, String description, String details) {
}

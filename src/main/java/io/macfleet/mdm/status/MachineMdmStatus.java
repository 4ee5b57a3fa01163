package io.macfleet.mdm.status;

/**
 * One machine's MDM state, from both sides: what the fleet's MDM server knows of its enrollment and what the Mac itself
 * reports ({@code profiles status} over SSH). The two can disagree (a Mac removed from the server, a token escrowed on
 * the Mac that the server does not expose), so both are shown. Fields are null when unknown; {@code error} says why.
 *
 * @param enrollmentId the inventory's {@code mdm.enrollmentId}, or null when the inventory names none
 * @param server null when there is no enrollment id to ask the server about
 */
public record MachineMdmStatus(String machine, String enrollmentId, ServerView server, MacView mac) {

    /**
     * @param server the server as it was asked ("nanohub https://mdm.example.com:9004")
     * @param statusReportsReceived the server holds a declarative status report from this enrollment (it is enrolled and
     *                              DDM works); NanoHUB has no API that lists enrollments, so this is the enrollment's sign
     * @param lastStatusReport when the newest status report arrived (ISO-8601), the closest NanoHUB comes to a check-in time
     * @param bootstrapToken escrowed, not-escrowed, or not-exposed-by-server (NanoHUB stores it but cannot read it back)
     * @param error why the server could not answer, naming the server and the request
     */
    public record ServerView(String server, Boolean statusReportsReceived, String lastStatusReport, String bootstrapToken, String error) {
    }

    /**
     * @param enrolled {@code profiles status -type enrollment}: "MDM enrollment: Yes…"
     * @param automatedDeviceEnrollment "Enrolled via DEP: Yes"
     * @param bootstrapTokenSupportedOnServer {@code profiles status -type bootstraptoken}
     * @param bootstrapTokenEscrowed the same: "escrowed to server: YES"
     * @param error why the Mac could not be asked
     */
    public record MacView(Boolean enrolled, Boolean automatedDeviceEnrollment, Boolean bootstrapTokenSupportedOnServer,
                          Boolean bootstrapTokenEscrowed, String error) {
    }

    /**
     * Read, and not enrolled: the Mac says it has no MDM enrollment, or the server has no status report from its
     * enrollment ID. Either blocks an update through MDM.
     */
    public boolean notEnrolled() {
        return (mac != null && Boolean.FALSE.equals(mac.enrolled())) || (server != null && Boolean.FALSE.equals(server.statusReportsReceived()));
    }

    /** Something could not be read (server or Mac). */
    public boolean failed() {
        return (server != null && server.error() != null) || (mac != null && mac.error() != null);
    }
}

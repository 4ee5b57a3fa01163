package io.macfleet.supervision;

import java.time.Instant;

/** Something the supervisor did or decided about a cluster; every one is audited, alerts also raise the banner. */
public record SupervisionEvent(Instant at, String cluster, Kind kind, String detail) {

    public enum Kind {
        RESTART_ORDERED("node.supervise.restart", false),
        RESTART_FAILED("node.supervise.restart", true),
        RECOVERED("node.supervise.recovered", false),
        GAVE_UP("node.supervise.alert", true),
        SKEW_REFUSED("node.supervise.refuse", true),
        RDMA_REBOOT_RECOMMENDED("node.supervise.rdma", true),
        RDMA_REBOOT_ORDERED("node.supervise.reboot", false),
        RDMA_REBOOT_DONE("node.supervise.reboot", false),
        RDMA_REBOOT_FAILED("node.supervise.reboot", true),
        OPERATOR_RESTART("node.supervise.operator-restart", false);

        private final String auditAction;
        private final boolean alert;

        Kind(String auditAction, boolean alert) {
            this.auditAction = auditAction;
            this.alert = alert;
        }

        public String auditAction() {
            return auditAction;
        }

        /** An alert needs an operator: console banner, metric, webhook. */
        public boolean alert() {
            return alert;
        }
    }
}

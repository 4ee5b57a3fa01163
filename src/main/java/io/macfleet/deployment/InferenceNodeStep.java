package io.macfleet.deployment;

import io.macfleet.provision.CheckResult;
import io.macfleet.provision.ClusterMeeting;
import io.macfleet.provision.MachineContext;
import io.macfleet.provision.PlaybookStep;
import io.macfleet.provision.StepDefinition;
import io.macfleet.provision.StepFailedException;
import io.macfleet.provision.StepType;
import io.macfleet.ssh.SshSettings;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code type: inference-node} (cluster scope): once every machine of the cluster in the run got here, deploys the
 * cluster's inference node through {@link NodeService} (the same deployment as {@code macfleet node deploy}: staged on
 * every Mac, one switch, journaled and audited). Already done when every rank runs the release's node jar and model
 * (same SHA-256) under launchd.
 */
public final class InferenceNodeStep implements StepDefinition {

    /** The step type {@code inference-node}. Without CDI (the built-in list) it has no service: it loads and validates only. */
    @Singleton
    public static final class Type implements StepType<Parameters> {
        private final NodeService service;

        public Type() {
            this.service = null;
        }

        @Inject
        public Type(NodeService service) {
            this.service = service;
        }

        @Override
        public String name() {
            return "inference-node";
        }

        @Override
        public Class<Parameters> parameters() {
            return Parameters.class;
        }

        @Override
        public PlaybookStep.Scope scope() {
            return PlaybookStep.Scope.CLUSTER;
        }

        @Override
        public StepDefinition define(Parameters parameters, PlaybookFiles files) {
            return new InferenceNodeStep(parameters, service);
        }
    }

    /**
     * @param model       a model file on the control host or an http(s) URL; default the cluster's {@code inference.model}
     * @param modelSha256 the SHA-256 of a model given by URL (required then)
     */
    public record Parameters(String model, String modelSha256) {
        public Parameters {
            if (model != null && model.isBlank()) {
                throw new IllegalArgumentException("'model' is empty; leave it out to deploy the cluster's inference.model");
            }
            if (model != null && (model.startsWith("http://") || model.startsWith("https://")) && (modelSha256 == null || modelSha256.isBlank())) {
                throw new IllegalArgumentException("'modelSha256' is required when 'model' is a URL (" + model + ")");
            }
        }
    }

    private final Parameters parameters;
    private final NodeService service;

    InferenceNodeStep(Parameters parameters, NodeService service) {
        this.parameters = parameters;
        this.service = service;
    }

    @Override
    public CheckResult check(MachineContext context) {
        throw new IllegalStateException("the inference-node step is checked per cluster");
    }

    @Override
    public boolean hasAction() {
        return true;
    }

    @Override
    public CheckResult checkCluster(ClusterMeeting meeting) {
        NodeService nodes = service();
        NodeRelease release = release(nodes, meeting.cluster());
        List<NodeRankStatus> statuses = nodes.status(meeting.cluster(), settings(meeting));
        List<String> differences = new ArrayList<>();
        for (NodeRankStatus status : statuses) {
            if (!status.running()) {
                differences.add(status.machine() + ": " + status.state() + status.error().map(error -> " (" + error + ")").orElse(""));
            } else if (!status.nodeSha256().equals(Optional.of(release.nodeSha256())) || !status.modelSha256().equals(Optional.of(release.modelSha256()))) {
                differences.add(status.machine() + ": runs node " + status.nodeSha256().map(NodeLayout::shortHash).orElse("?") + ", model "
                        + status.modelSha256().map(NodeLayout::shortHash).orElse("?"));
            }
        }
        String wanted = "node " + release.nodeVersion() + " (" + NodeLayout.shortHash(release.nodeSha256()) + "), model " + release.modelFileName()
                + " (" + NodeLayout.shortHash(release.modelSha256()) + ")";
        if (differences.isEmpty()) {
            return CheckResult.satisfied(wanted + " runs on all " + statuses.size() + " ranks of " + meeting.cluster());
        }
        return CheckResult.notSatisfied(wanted + " is not deployed on " + meeting.cluster() + ": " + String.join("; ", differences));
    }

    @Override
    public String actCluster(ClusterMeeting meeting) {
        if (!meeting.missing().isEmpty()) {
            throw new StepFailedException("not deploying the inference node of " + meeting.cluster() + ": " + String.join(", ", meeting.missing())
                    + " did not reach this step");
        }
        NodeService nodes = service();
        NodeRelease release = release(nodes, meeting.cluster());
        MachineContext first = meeting.arrived().getFirst();
        try {
            NodeDeployer.Outcome outcome = nodes.deploy(meeting.cluster(), release, settings(meeting), new NodeDeployer.Listener() {
                @Override
                public void step(String machine, String what) {
                    first.progress(machine + ": " + what);
                }
            });
            return outcome.summary();
        } catch (NodeService.RefusedException | NodeDeployer.DeployFailedException e) {
            throw new StepFailedException("deploying the inference node of " + meeting.cluster() + " failed: " + e.getMessage());
        }
    }

    private NodeService service() {
        if (service == null) {
            throw new StepFailedException("the inference-node step needs the macfleet service's node deployment (this run was wired without it)");
        }
        return service;
    }

    private NodeRelease release(NodeService nodes, String cluster) {
        try {
            return nodes.release(cluster, new NodeService.Request(Optional.ofNullable(parameters.model()), Optional.ofNullable(parameters.modelSha256()),
                    Optional.empty(), Optional.empty()));
        } catch (NodeService.RefusedException e) {
            throw new StepFailedException(e.getMessage());
        }
    }

    private static SshSettings settings(ClusterMeeting meeting) {
        if (meeting.arrived().isEmpty()) {
            throw new StepFailedException("no machine of " + meeting.cluster() + " reached the inference-node step");
        }
        return meeting.arrived().getFirst().sshSettings();
    }
}

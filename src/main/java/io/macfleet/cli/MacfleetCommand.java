package io.macfleet.cli;

import picocli.CommandLine.Command;

/**
 * The root of the `macfleet` command line. Subcommands are registered here.
 */
@Command(name = "macfleet",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        // The help texts of shared options (command/JsonOption) that differ per command.
        resourceBundle = "io.macfleet.cli.SharedOptions",
        description = "Fleet management and provisioning for Mac Studio clusters running local LLM inference.",
        subcommands = {ServeCommand.class, InventoryCommand.class, AuditCommand.class, io.macfleet.ssh.SshCommand.class,
                DemoCommand.class, io.macfleet.facts.FactsCommand.class, io.macfleet.facts.DriftCommand.class,
                io.macfleet.cabling.CablingCommand.class, io.macfleet.provision.ProvisionCommand.class,
                io.macfleet.provision.PlaybookCommand.class, io.macfleet.accounts.UsersCommand.class,
                io.macfleet.accounts.TokensCommand.class, io.macfleet.runtime.NodeCommand.class,
                io.macfleet.osupdate.OsUpdateCommand.class, io.macfleet.mdm.status.MdmCommand.class,
                io.macfleet.supervision.SupervisionCommand.class, io.macfleet.models.ModelCommand.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
                "0:success",
                "1:a check failed (invalid inventory, drift, failed provisioning step, ...)",
                "2:usage or input error (bad option, unreadable file, unknown machine)",
                "3:stopped at a step that needs a person (non-interactive mode)"})
public class MacfleetCommand {
}

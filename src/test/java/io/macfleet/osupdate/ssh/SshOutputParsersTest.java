package io.macfleet.osupdate.ssh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.osupdate.ssh.CryptoUsers.CryptoUser;
import io.macfleet.osupdate.ssh.SoftwareUpdateListing.OfferedUpdate;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The parsers of the SSH update method on real captures (src/test/resources/macos-samples, sources in SOURCES.md). */
class SshOutputParsersTest {

    static String sample(String path) throws IOException {
        try (InputStream in = SshOutputParsersTest.class.getResourceAsStream("/macos-samples/" + path)) {
            if (in == null) {
                throw new IllegalStateException("missing sample " + path);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void readsTheTahoeListingWithItsLabelBuildAndTrailingSpace() throws IOException {
        List<OfferedUpdate> updates = SoftwareUpdateListing.parse(sample("softwareupdate/list-macos-tahoe-26.6.txt"), "");
        assertThat(updates).containsExactly(new OfferedUpdate("macOS Tahoe 26.6-25G72", "macOS Tahoe 26.6", "26.6", Optional.of("25G72"),
                3829595, true, true));
    }

    @Test
    void tellsMacosFromSafariAndKeepsLabelsWithSpacesAndSuffixesWhole() throws IOException {
        List<OfferedUpdate> updates = SoftwareUpdateListing.parse(sample("softwareupdate/list-macos-26.7-minor-major-rsr-safari.txt"), "");
        assertThat(updates).extracting(OfferedUpdate::label).containsExactly("Safari27.0TahoeAuto-27.0", "macOS Tahoe 26.7.1-25H300",
                "macOS Tahoe 26.7.1 (a)-25H300a", "macOS 27-26A428");
        assertThat(updates.getFirst().macos()).isFalse();
        assertThat(updates.getFirst().build()).isEmpty();
        assertThat(updates.getFirst().restart()).isFalse();
        assertThat(updates.get(2).version()).isEqualTo("26.7.1 (a)");
        assertThat(updates.get(2).build()).contains("25H300a");
        assertThat(updates.get(3).version()).isEqualTo("27");
        assertThat(updates.get(3).build()).contains("26A428");
    }

    @Test
    void nothingOfferedOnlyWhenTheOutputSaysSo() throws IOException {
        assertThat(SoftwareUpdateListing.parse(sample("softwareupdate/list-nothing.stdout.txt"), sample("softwareupdate/list-nothing.stderr.txt"))).isEmpty();
        assertThatThrownBy(() -> SoftwareUpdateListing.parse("Software Update Tool\n\nSomething Apple has not printed before\n", ""))
                .hasMessageContaining("neither an update");
        assertThatThrownBy(() -> SoftwareUpdateListing.parse("Software Update Tool\n* Label: macOS Next-27Z1\n", ""))
                .hasMessageContaining("line 3").hasMessageContaining("macOS Next-27Z1");
    }

    @Test
    void findsTheVolumeOwnerInTheTahoeCapture() throws IOException {
        List<CryptoUser> users = CryptoUsers.parse(sample("diskutil-apfs-listCryptoUsers/tahoe-owner-bootstrap-token-recovery.txt"));
        assertThat(users).containsExactly(
                new CryptoUser("DA145BD0-81C7-41AA-9676-794E0A14B63D", "Local Open Directory User", Optional.of(true)),
                new CryptoUser("2457711A-523C-4604-B75A-F48A571D5036", "MDM Bootstrap Token External Key", Optional.of(true)),
                new CryptoUser("EBC6C064-0000-11AA-AA11-00306543ECAC", "Personal Recovery User", Optional.of(true)));
        assertThat(CryptoUsers.volumeOwner(users, "da145bd0-81c7-41aa-9676-794e0a14b63d")).isTrue();
        assertThat(CryptoUsers.volumeOwner(users, "11111111-2222-3333-4444-555555555555")).isFalse();
    }

    @Test
    void readsTheBlogRenderingWithATypographicDashAndOutputsWithoutOwnerLines() throws IOException {
        String rendered = sample("diskutil-apfs-listCryptoUsers/tahoe-owner-bootstrap-token-recovery.txt").replace("+--", "+\u2013");
        assertThat(CryptoUsers.parse(rendered)).hasSize(3);
        List<CryptoUser> intel = CryptoUsers.parse(sample("diskutil-apfs-listCryptoUsers/intel-no-volume-owner-lines.txt"));
        assertThat(intel).extracting(CryptoUser::type).containsExactly("Local Open Directory User", "iCloud Recovery User", "iCloud Recovery External Key");
        assertThat(intel.getFirst().volumeOwner()).isEmpty();
    }

    @Test
    void aListedUserWhoIsNotAVolumeOwnerCannotAuthorize() throws IOException {
        List<CryptoUser> users = CryptoUsers.parse(sample("diskutil-apfs-listCryptoUsers/composed-user-not-volume-owner.txt"));
        assertThat(CryptoUsers.volumeOwner(users, "6F0C1A52-3E4B-4D8A-9C21-7B5E2F0D9A11")).isFalse();
        assertThatThrownBy(() -> CryptoUsers.parse("Cryptographic users for disk3s1s1 (2 found)\n|\n+-- 6F0C1A52-3E4B-4D8A-9C21-7B5E2F0D9A11\n"))
                .hasMessageContaining("says 2 user(s), 1 entries");
        assertThatThrownBy(() -> CryptoUsers.parse("Error: no such volume\n")).hasMessageContaining("line 1");
    }

    @Test
    void readsTheGeneratedUidOfAnAccount() {
        assertThat(CryptoUsers.generatedUid("GeneratedUID: da145bd0-81c7-41aa-9676-794e0a14b63d\n")).isEqualTo("DA145BD0-81C7-41AA-9676-794E0A14B63D");
        assertThatThrownBy(() -> CryptoUsers.generatedUid("<dscl_cmd> DS Error: -14136 (eDSRecordNotFound)\n")).hasMessageContaining("eDSRecordNotFound");
    }
}

package io.macfleet.models.placement;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

/**
 * The relay as the Macs run it: {@link PlacementRelay} and its nested classes, as macfleet's build compiled them, in a
 * jar of their own (a few tens of KiB, made in memory) whose manifest names the relay as its main class. Compiled
 * classes rather than the source file: the Mac's JVM then starts without running javac, which took seconds of CPU per
 * Mac.
 */
final class RelayJar {
    private RelayJar() {
    }

    static byte[] bytes() {
        Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        manifest.getMainAttributes().put(Attributes.Name.MAIN_CLASS, PlacementRelay.class.getName());
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        try (JarOutputStream jar = new JarOutputStream(buffer, manifest)) {
            for (Class<?> type : classes(PlacementRelay.class)) {
                String resource = type.getName().replace('.', '/') + ".class";
                try (InputStream in = PlacementRelay.class.getClassLoader().getResourceAsStream(resource)) {
                    if (in == null) {
                        throw new IllegalStateException(resource + " is missing from macfleet's class path");
                    }
                    JarEntry entry = new JarEntry(resource);
                    // A fixed time: the same macfleet makes the same jar, byte for byte.
                    entry.setTime(0);
                    jar.putNextEntry(entry);
                    in.transferTo(jar);
                    jar.closeEntry();
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return buffer.toByteArray();
    }

    /** The class and its nested classes, depth first. */
    static List<Class<?>> classes(Class<?> type) {
        List<Class<?>> all = new ArrayList<>(List.of(type));
        for (Class<?> nested : type.getDeclaredClasses()) {
            all.addAll(classes(nested));
        }
        return all;
    }
}

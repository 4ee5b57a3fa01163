package io.macfleet.accounts;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.annotation.security.PermitAll;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.PATCH;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A guard for every area's endpoints: a state-changing REST method (POST, PUT, PATCH, DELETE) must name operator
 * or admin in its own {@code @RolesAllowed}; the class-wide default (viewer) would let any viewer act. Only the
 * login and logout forms are open.
 */
class RolesOnEndpointsTest {

    @Test
    void everyStateChangingEndpointNeedsOperatorOrAdmin() throws Exception {
        List<String> offenders = new ArrayList<>();
        List<String> checked = new ArrayList<>();
        for (Class<?> type : applicationClasses()) {
            Method[] methods;
            try {
                methods = type.getDeclaredMethods();
            } catch (LinkageError e) {
                continue;
            }
            for (Method method : methods) {
                boolean changesState = Stream.of(POST.class, PUT.class, PATCH.class, DELETE.class).anyMatch(method::isAnnotationPresent);
                if (!changesState) {
                    continue;
                }
                String name = type.getName() + "." + method.getName();
                checked.add(name);
                RolesAllowed roles = method.getAnnotation(RolesAllowed.class);
                boolean open = method.isAnnotationPresent(PermitAll.class) && type == LoginResource.class;
                boolean acting = roles != null && Arrays.stream(roles.value()).noneMatch(role -> role.equals(Roles.VIEWER))
                        && Arrays.stream(roles.value()).allMatch(role -> role.equals(Roles.OPERATOR) || role.equals(Roles.ADMIN));
                if (!open && !acting) {
                    offenders.add(name);
                }
            }
        }
        assertThat(checked).as("the scan found the simulator's fault endpoint").anyMatch(name -> name.endsWith("SimulatorResource.fault"));
        assertThat(offenders).as("state-changing endpoints without @RolesAllowed(Roles.OPERATOR or Roles.ADMIN) on the method").isEmpty();
    }

    private static List<Class<?>> applicationClasses() throws IOException {
        Path root = Path.of("target", "classes");
        List<Class<?>> classes = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root.resolve("io/macfleet"))) {
            for (Path file : files.filter(path -> path.toString().endsWith(".class")).toList()) {
                String name = root.relativize(file).toString().replace(java.io.File.separatorChar, '.').replaceAll("\\.class$", "");
                try {
                    classes.add(Class.forName(name, false, RolesOnEndpointsTest.class.getClassLoader()));
                } catch (ClassNotFoundException | LinkageError e) {
                    // Generated or optional classes that do not load here are not resources.
                }
            }
        }
        return classes;
    }
}

package io.macfleet.models;

import jakarta.enterprise.context.ApplicationScoped;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The model catalogue: models by name, and where each verified file lies on the control host
 * ({@code <macfleet.home>/models/<name>/<path>}).
 */
@ApplicationScoped
public class ModelCatalogue {

    public Optional<CatalogueModel> find(String name) {
        throw new UnsupportedOperationException("not yet");
    }

    public List<CatalogueModel> list() {
        throw new UnsupportedOperationException("not yet");
    }

    public Path localFile(CatalogueModel model, ModelFile file) {
        throw new UnsupportedOperationException("not yet");
    }
}

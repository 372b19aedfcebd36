/* contact_model.c: the kinds of contact.model in one table. Every property that differs between
 * the models is a column here, so code that depends on the model asks the table instead of
 * testing which model it is; the step's solve is chosen in one switch (sim_step.c). */
#include "sim.h"

#include <string.h>

typedef struct contact_model_row {
    const char *name; /* contact.model's value */
    int any_terrain;  /* solves on slopes, heightfields, boxes and anisotropic friction */
    int forces;       /* multipliers are pushing forces (work, force queries, surface contact) */
} contact_model_row;

static const contact_model_row rows[MLC_CONTACT_MODELS] = {
    [MLC_CONTACT_COMPLEMENTARITY] = {"complementarity", 1, 1},
    [MLC_CONTACT_EQUALITY] = {"equality", 0, 0},
};

static const contact_model_row *row(mlc_contact_model model) {
    return (unsigned)model < MLC_CONTACT_MODELS ? &rows[model] : NULL;
}

int mlc_contact_model_parse(const char *name) {
    for (int m = 0; m < MLC_CONTACT_MODELS; m++)
        if (name && strcmp(name, rows[m].name) == 0) return m;
    return -1;
}

const char *mlc_contact_model_name(mlc_contact_model model) {
    return row(model) ? row(model)->name : "unknown";
}

int mlc_contact_model_any_terrain(mlc_contact_model model) {
    return row(model) ? row(model)->any_terrain : 0;
}

int mlc_contact_model_forces(mlc_contact_model model) {
    return row(model) ? row(model)->forces : 0;
}

/* test_config.c: configuration defaults, JSON and --set loading, error messages, validation,
 * round trips through JSON and params.json-shaped input. */
#include "test_util.h"

#include <stdio.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "objective.h"

/* Write `text` to a fresh temporary file; `path` receives its name (caller unlinks). */
static void write_temp(const char *text, char path[64]) {
    strcpy(path, "/tmp/mlc_test_config_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t n = strlen(text);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
}

/* Load `text` as a file on top of *cfg; returns the status, message in err. */
static mlc_status load_text(mlc_config *cfg, const char *text, char path[64], mlc_err *err) {
    write_temp(text, path);
    mlc_status s = mlc_config_load_file(cfg, path, err);
    unlink(path);
    return s;
}

static void defaults_should_match_interface_table(void **state) {
    (void)state;
    mlc_config c;
    mlc_config_defaults(&c);
    assert_string_equal(c.mesh.path, "");
    assert_int_equal(c.mesh.normalize, 1);
    assert_near(c.mesh.extent, 2.0, 0);
    assert_near(c.material.density, 1000, 0);
    assert_near(c.material.mu, 1e6, 0);
    assert_near(c.material.gamma, 1e6, 0);
    assert_near(c.material.poisson_modes, 0.25, 0);
    /* A finer subspace than the paper's w = 5 (chosen on the zoo: docs/method.md). */
    assert_int_equal(c.subspace.skinning_modes, 10);
    assert_int_equal(c.subspace.passive_clusters, 10);
    assert_int_equal(c.subspace.actuation_clusters, 1);
    /* Contact (the credible-gaits redesign, CHANGELOG.md): 64 samples, soles first,
     * Coulomb friction without the paper's damping, complementarity. */
    assert_int_equal(c.subspace.contact_samples, 64);
    assert_near(c.subspace.contact_band, 0.01, 0);
    /* One recipe for any body, chosen on the zoo (scripts/bench_zoo.sh, docs/method.md): the
     * contact cover, four modes under the paper's per-signal bound at p = 0.7, ramped in, and
     * the best-ever gait must hold its gain in 8 perturbed replays. */
    assert_near(c.subspace.contact_spacing, 0.04, 0);
    assert_int_equal(c.cmaes.robust_samples, 8);
    assert_string_equal(c.cmaes.robust_scope, "improving");
    assert_string_equal(c.subspace.cache, "");
    assert_int_equal(c.actuation.modes, 4);
    assert_int_equal(c.actuation.nmode_list, 0);
    assert_int_equal(c.actuation.sinusoids, 2);
    assert_near(c.actuation.period_range[0], 0.2, 0);
    assert_near(c.actuation.period_range[1], 0.6, 0);
    assert_near(c.actuation.phase_range[0], 0, 0);
    assert_near(c.actuation.phase_range[1], 1.5707963, 0);
    assert_near(c.actuation.amplitude_p, 0.7, 0);
    assert_int_equal(c.actuation.amplitude_bound, MLC_BOUND_PER_SIGNAL);
    assert_near(c.actuation.ramp, 0.3, 0);
    assert_int_equal(c.actuation.nfixed_periods, 0);
    assert_int_equal(c.actuation.select, 0);
    assert_int_equal(c.actuation.nparameters, 0);
    assert_near(c.sim.dt, 0.01, 0);
    assert_int_equal(c.sim.steps, 300);
    assert_int_equal(c.sim.iterations, 10);
    assert_near(c.sim.tolerance, 0, 0);
    assert_int_equal(c.sim.initial_guess, MLC_GUESS_INERTIAL);
    assert_near(c.sim.gravity[0], 0, 0);
    assert_near(c.sim.gravity[1], -9.81, 0);
    assert_near(c.sim.gravity[2], 0, 0);
    assert_int_equal(c.contact.enabled, 1);
    assert_near(c.contact.damping, 0, 0);
    assert_near(c.contact.friction, 0.5, 0);
    assert_int_equal(c.contact.model, MLC_CONTACT_COMPLEMENTARITY);
    assert_near(c.contact.push_speed, 0.1, 0);
    assert_near(c.sim.rayleigh[0], 0, 0);
    assert_near(c.sim.rayleigh[1], 0, 0);
    assert_int_equal(c.contact.projection, MLC_PROJECTION_POSITION);
    assert_near(c.contact.ground_height, 0, 0);
    assert_int_equal(c.objective.kind, MLC_OBJ_LOCOMOTION);
    assert_near(c.objective.direction[0], 1, 0);
    assert_near(c.objective.direction[1], 0, 0);
    assert_near(c.objective.direction[2], 0, 0);
    assert_int_equal(c.objective.forward_set, 0);
    assert_int_equal(c.objective.align, 1);
    assert_near(c.objective.work_penalty, 0, 0);
    assert_int_equal(c.objective.work_abs, 0);
    assert_int_equal(c.objective.upright, 1);
    assert_int_equal(c.objective.credible_gate, 1);
    assert_int_equal(c.output.viewer, 0);
    assert_int_equal(c.objective.align_mode, MLC_ALIGN_MIN);
    assert_int_equal(c.cmaes.population, 16);
    assert_int_equal(c.cmaes.generations, 200);
    assert_near(c.cmaes.sigma0, 0, 0); /* chosen from the signals */
    assert_int_equal(c.cmaes.seed, 1);
    assert_int_equal(c.cmaes.restarts, 0);
    assert_string_equal(c.cmaes.restart_strategy, "ipop");
    assert_near(c.cmaes.restart_collapse, 0.005, 0);
    assert_int_equal(c.cmaes.restart_stall, 80);
    assert_near(c.cmaes.restart_room, 1.0, 0);
    assert_int_equal(c.cmaes.diagonal, -1); /* chosen from the dimension */
    assert_int_equal(c.cmaes.mean_every, 10);
    assert_int_equal(c.cmaes.budget, 0);
    assert_string_equal(c.output.dir, "modalloco-out");
    assert_int_equal(c.output.every, 1);
    assert_int_equal(c.parallel.threads, 0);
    assert_near(c.reference.tolerance, 1e-6, 0);
    assert_int_equal(c.reference.max_iterations, 1000);
    mlc_err err;
    assert_int_equal(mlc_config_validate(&c, &err), MLC_OK);
}

/* Properties of every module's key table: a name in its section, unique; one line of doc; a
 * default that parses, lies inside its bounds and is what mlc_config_defaults sets; every key
 * written out and read back bit-exactly; a value of the wrong shape refused with exit code 2. */
static void key_tables_should_hold_their_properties(void **state) {
    (void)state;
    mlc_config c;
    mlc_config_defaults(&c);
    cJSON *root = mlc_config_to_cjson(&c);
    assert_non_null(root);
    int written = 0, listed = 0;
    const cJSON *sec, *item;
    cJSON_ArrayForEach(sec, root) cJSON_ArrayForEach(item, sec) written++;
    for (int s = 0; s < mlc_config_nsections; s++) {
        const mlc_key_section *ks = mlc_config_sections[s].keys;
        size_t sl = strlen(ks->name);
        assert_true(ks->nkeys > 0);
        for (int i = 0; i < ks->nkeys; i++, listed++) {
            const mlc_key *k = &ks->keys[i];
            const mlc_config_section *found = NULL;
            if (strncmp(k->name, ks->name, sl) != 0 || k->name[sl] != '.')
                fail_msg("key %s is not in its section %s", k->name, ks->name);
            assert_ptr_equal(mlc_config_key_find(k->name, &found), k); /* unique names */
            assert_ptr_equal(found, &mlc_config_sections[s]);
            if (!k->meaning || strlen(k->meaning) < 3 || strchr(k->meaning, '\n'))
                fail_msg("key %s has no one-line doc", k->name);
            assert_true(k->type_name && k->type_name[0]);
            assert_non_null(k->range);
            /* The default is what the defaults hold, and it is valid on its own. */
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(root, ks->name), k->name + sl + 1);
            cJSON *want = cJSON_Parse(k->default_json);
            if (!want || !v || !cJSON_Compare(v, want, 1))
                fail_msg("key %s: default %s does not parse or differs from the defaults", k->name,
                         k->default_json);
            char set[4200];
            mlc_err err;
            mlc_config d;
            mlc_config_defaults(&d);
            snprintf(set, sizeof set, "%s=%s", k->name, k->default_json);
            if (mlc_config_set(&d, set, &err) != MLC_OK)
                fail_msg("key %s: its default is refused: %s", k->name, err.msg);
            assert_memory_equal(&d, &c, sizeof c);
            /* A bounded number just outside its bound is refused (exit code 2). */
            if ((k->type == MLC_KEY_INT || k->type == MLC_KEY_NUMBER) && k->lo_kind) {
                snprintf(set, sizeof set, "%s=%.17g", k->name, k->lo - 1);
                assert_int_equal(mlc_config_set(&d, set, &err), MLC_EINVAL);
                assert_int_equal(mlc_exit_code(MLC_EINVAL), 2);
                assert_non_null(strstr(err.msg, k->name));
            }
            /* A name outside the choices is refused and the message lists the valid ones. */
            if (k->choices) {
                snprintf(set, sizeof set, "%s=\"nope\"", k->name);
                assert_int_equal(mlc_config_set(&d, set, &err), MLC_EINVAL);
                assert_non_null(strstr(err.msg, k->name));
            }
            /* No key takes a boolean where it wants something else, nor the reverse. */
            snprintf(set, sizeof set, "%s=%s", k->name, k->type == MLC_KEY_BOOL ? "3" : "true");
            if (k->type != MLC_KEY_STRING) {
                assert_int_equal(mlc_config_set(&d, set, &err), MLC_EINVAL);
                assert_non_null(strstr(err.msg, k->name));
            }
            assert_memory_equal(&d, &c, sizeof c); /* refused values leave it unchanged */
            cJSON_Delete(want);
        }
    }
    assert_int_equal(written, listed);
    assert_null(mlc_config_key_find("sim.step", NULL));
    cJSON_Delete(root);
    /* Round trip: the text form of a configuration with a value off its default in every
     * section reads back to the same bytes. */
    mlc_err err;
    const char *sets[] = {"sim.dt=0.1",
                          "mesh.up=[0,0.5,1]",
                          "objective.kind=turn",
                          "contact.boxes=[{\"min\":[0,0,0],\"max\":[1,1,1]}]",
                          "actuation.fixed_periods=0.1",
                          "cmaes.seed=-3"};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        assert_int_equal(mlc_config_set(&c, sets[i], &err), MLC_OK);
    char *text = mlc_config_to_json(&c), path[64];
    mlc_config back;
    mlc_config_defaults(&back);
    assert_int_equal(load_text(&back, text, path, &err), MLC_OK);
    assert_memory_equal(&back, &c, sizeof c);
    mlc_free(text);
}

/* The objective kinds' registry agrees with the enum and with the names the key accepts. */
static void objective_kinds_should_agree_with_the_key(void **state) {
    (void)state;
    char names[256] = "";
    for (int i = 0; i < mlc_objective_nkinds; i++) {
        const mlc_objective_kind_info *k = &mlc_objective_kinds[i];
        assert_int_equal((int)k->kind, i);
        assert_ptr_equal(mlc_objective_kind_find(k->name), k);
        assert_ptr_equal(mlc_objective_kind_info_of(i), k);
        assert_true(!strcmp(k->task_error_unit, "extents") || !strcmp(k->task_error_unit, "rad"));
        if (k->goal_required) assert_non_null(k->goal_key);
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? "|" : "",
                 k->name);
        /* Each kind loads and is written back under its name. */
        mlc_config c;
        mlc_err err;
        char set[64];
        mlc_config_defaults(&c);
        snprintf(set, sizeof set, "objective.kind=%s", k->name);
        assert_int_equal(mlc_config_set(&c, set, &err), MLC_OK);
        assert_int_equal(c.objective.kind, i);
        char *text = mlc_config_to_json(&c);
        cJSON *back = cJSON_Parse(text);
        const cJSON *kind =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItem(back, "objective"), "kind");
        assert_true(cJSON_IsString(kind));
        assert_string_equal(kind->valuestring, k->name);
        cJSON_Delete(back);
        mlc_free(text);
    }
    assert_string_equal(names, MLC_OBJECTIVE_KIND_NAMES);
    /* An alias reads as its kind and is written back under the kind's own name; a prefix of
     * an alias or of a name is no alias. */
    mlc_config c, want;
    mlc_err err;
    mlc_config_defaults(&c);
    mlc_config_defaults(&want);
    assert_int_equal(mlc_config_set(&c, "objective.kind=jump", &err), MLC_OK);
    assert_int_equal(mlc_config_set(&c, "objective.kind=walk", &err), MLC_OK);
    assert_memory_equal(&c, &want, sizeof c);
    char *text = mlc_config_to_json(&c);
    assert_non_null(strstr(text, "\"locomotion\""));
    assert_null(strstr(text, "\"walk\""));
    mlc_free(text);
    assert_int_equal(mlc_config_set(&c, "objective.kind=wal", &err), MLC_EINVAL);
    assert_int_equal(mlc_config_set(&c, "objective.kind=locomotion=walk", &err), MLC_EINVAL);
    assert_null(mlc_objective_kind_find("swim"));
    assert_null(mlc_objective_kind_info_of(mlc_objective_nkinds));
}

/* A config with every kind of field off its default. */
static void make_unusual(mlc_config *c) {
    mlc_err err;
    const char *sets[] = {
        "mesh.path=meshes/bat.mesh",
        "mesh.normalize=false",
        "mesh.extent=1.25",
        "mesh.up=[0.5, 0, -2]",
        "material.regions={\"-3\": {\"mu\": 2.5e6, \"friction\": 0.1}, \"7\": {}, "
        "\"12\": {\"gamma\": 0.30000000000000004, \"density\": 640}}",
        "regions.file=labels/body.txt",
        "regions.auto=4",
        "material.poisson_modes=0.1",
        "subspace.skinning_modes=7",
        "subspace.cache=/tmp/cache.bin",
        "actuation.mode_list=[3, 0, 7]",
        "actuation.sinusoids=3",
        "actuation.period_range=[0.25, 0.5]",
        "actuation.fixed_periods=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]",
        "actuation.select=2",
        "actuation.parameters=[{\"mode\": 3, \"sinusoids\": [{\"amplitude\": -0.1, "
        "\"period\": 0.3, \"phase\": 0.125}]}, {\"mode\": 1, \"sinusoids\": [{\"amplitude\": "
        "0.2, \"period\": 0.45, \"phase\": 1e-3}, {\"amplitude\": 0.1, \"period\": 0.2, "
        "\"phase\": 0}]}]",
        "sim.dt=0.1",
        "sim.initial_guess=previous",
        "sim.gravity=[0.5, -1.0000000000000002, 3]",
        "contact.enabled=false",
        "contact.projection=velocity",
        "contact.ground_height=-0.5",
        "sim.integrator=bdf2",
        "contact.slope=12.5",
        "contact.boxes=[{\"min\": [0.5, -1, -1], \"max\": [1.5, 0.1, 1]}, {\"min\": [2, -1, "
        "-1], \"max\": [3, 0.2, 1], \"friction\": 0.8}]",
        "contact.anisotropy=1.75",
        "objective.kind=jump",
        "objective.direction=[0, 0, -1]",
        "objective.forward=[0.6, 0, 0.8]",
        "objective.work_abs=true",
        "cmaes.seed=-42",
        "output.dir=out dir/x",
        "parallel.threads=3",
    };
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        if (mlc_config_set(c, sets[i], &err) != MLC_OK) fail_msg("%s: %s", sets[i], err.msg);
    assert_int_equal(mlc_config_validate(c, &err), MLC_OK);
}

/* A relative mesh.path in a config file names a file next to the config when one is there,
 * else stays relative to the working directory (how config.json records it). */
static void mesh_path_should_be_found_next_to_the_config(void **state) {
    (void)state;
    char dir[] = "/tmp/mlc-test-config-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cfgp[128], meshp[128];
    snprintf(cfgp, sizeof cfgp, "%s/run.json", dir);
    snprintf(meshp, sizeof meshp, "%s/body.off", dir);
    FILE *f = fopen(cfgp, "w");
    assert_non_null(f);
    fputs("{\"mesh\": {\"path\": \"body.off\"}}\n", f);
    fclose(f);
    mlc_config c;
    mlc_err err;
    mlc_config_defaults(&c);
    assert_int_equal(mlc_config_load_file(&c, cfgp, &err), MLC_OK);
    assert_string_equal(c.mesh.path, "body.off"); /* nothing next to it: unchanged */
    f = fopen(meshp, "w");
    assert_non_null(f);
    fclose(f);
    mlc_config_defaults(&c);
    assert_int_equal(mlc_config_load_file(&c, cfgp, &err), MLC_OK);
    assert_string_equal(c.mesh.path, meshp);
    /* --set is relative to the working directory, never rewritten. */
    assert_int_equal(mlc_config_set(&c, "mesh.path=body.off", &err), MLC_OK);
    assert_string_equal(c.mesh.path, "body.off");
    unlink(meshp);
    unlink(cfgp);
    rmdir(dir);
}

static void json_round_trip_should_reproduce_the_struct(void **state) {
    (void)state;
    for (int variant = 0; variant < 2; variant++) {
        mlc_config a, b;
        mlc_config_defaults(&a);
        if (variant) make_unusual(&a);
        long live = mlc_alloc_live();
        char *text = mlc_config_to_json(&a);
        assert_non_null(text);
        assert_int_equal(text[strlen(text) - 1], '\n');
        /* Load onto defaults (variant 0) and onto a different config (variant 1): every key is
         * written, so the result must not depend on the starting point. */
        mlc_config_defaults(&b);
        if (!variant) make_unusual(&b);
        char path[64];
        mlc_err err;
        if (load_text(&b, text, path, &err) != MLC_OK) fail_msg("%s", err.msg);
        mlc_free(text);
        assert_int_equal(mlc_alloc_live(), live);
        assert_memory_equal(&a, &b, sizeof a);
    }
}

/* mesh.up takes a name or a vector, keeps whichever was given through config.json, and sets
 * the vector preparation reads either way. */
static void mesh_up_should_take_names_and_vectors(void **state) {
    (void)state;
    mlc_config c, back;
    mlc_err err;
    mlc_config_defaults(&c);
    assert_string_equal(c.mesh.up, "+y");
    static const struct {
        const char *set;
        double v[3];
        const char *name;
    } ok[] = {{"mesh.up=+z", {0, 0, 1}, "+z"},          {"mesh.up=-z", {0, 0, -1}, "-z"},
              {"mesh.up=\"-x\"", {-1, 0, 0}, "-x"},     {"mesh.up=[0,0,1]", {0, 0, 1}, ""},
              {"mesh.up=[1,-2,0.5]", {1, -2, 0.5}, ""}, {"mesh.up=+y", {0, 1, 0}, "+y"}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        if (mlc_config_set(&c, ok[i].set, &err) != MLC_OK) fail_msg("%s: %s", ok[i].set, err.msg);
        assert_string_equal(c.mesh.up, ok[i].name);
        for (int k = 0; k < 3; k++)
            assert_near(c.mesh.up_vector[k], ok[i].v[k], 0);
        assert_int_equal(mlc_config_validate(&c, &err), MLC_OK);
        char *text = mlc_config_to_json(&c);
        assert_non_null(text);
        assert_non_null(strstr(text, ok[i].name[0] ? ok[i].name : "\"up\":\t["));
        cJSON *root = cJSON_Parse(text);
        mlc_free(text);
        mlc_config_defaults(&back);
        assert_int_equal(mlc_config_apply_json(&back, root, "config.json", &err), MLC_OK);
        cJSON_Delete(root);
        assert_memory_equal(&back, &c, sizeof c);
    }
    static const char *const bad[] = {"mesh.up=z",   "mesh.up=up",    "mesh.up=+w",
                                      "mesh.up=5",   "mesh.up=[0,1]", "mesh.up=[0,0,0]",
                                      "mesh.up=null"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mlc_config before = c;
        if (mlc_config_set(&c, bad[i], &err) != MLC_EINVAL) fail_msg("%s: accepted", bad[i]);
        if (!strstr(err.msg, "'mesh.up")) fail_msg("%s: message '%s'", bad[i], err.msg);
        assert_memory_equal(&c, &before, sizeof c);
    }
    /* A name that disagrees with the vector (only possible by writing the struct) is caught. */
    strcpy(c.mesh.up, "+x");
    assert_int_equal(mlc_config_validate(&c, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "mesh.up"));
}

static void set_should_parse_each_type(void **state) {
    (void)state;
    mlc_config c;
    mlc_err err;
    mlc_config_defaults(&c);
    make_unusual(&c);
    assert_string_equal(c.mesh.path, "meshes/bat.mesh"); /* bare string */
    assert_int_equal(c.mesh.normalize, 0);               /* bool */
    assert_near(c.mesh.extent, 1.25, 0);                 /* number */
    assert_int_equal(c.subspace.skinning_modes, 7);      /* int */
    assert_int_equal(c.material.nregions, 3);            /* region materials, in their order */
    assert_int_equal(c.material.regions[0].label, -3);
    assert_int_equal(c.material.regions[0].set, MLC_REGION_MU | MLC_REGION_FRICTION);
    assert_near(c.material.regions[0].friction, 0.1, 0);
    assert_int_equal(c.material.regions[1].set, 0);
    assert_int_equal(c.material.regions[2].label, 12);
    assert_near(c.material.regions[2].density, 640, 0);
    assert_int_equal(c.actuation.nmode_list, 3); /* int array */
    assert_int_equal(c.actuation.mode_list[2], 7);
    assert_near(c.actuation.period_range[1], 0.5, 0); /* range */
    assert_int_equal(c.actuation.nfixed_periods, 9);  /* number array */
    assert_near(c.actuation.fixed_periods[8], 0.9, 0);
    assert_int_equal(c.actuation.nparameters, 2); /* parameters */
    assert_int_equal(c.actuation.parameters[1].mode, 1);
    assert_int_equal(c.actuation.parameters[1].nsinusoids, 2);
    assert_near(c.actuation.parameters[1].sinusoids[0].phase, 1e-3, 0);
    assert_near(c.actuation.parameters[0].sinusoids[0].amplitude, -0.1, 0);
    assert_near(c.sim.gravity[1], -1.0000000000000002, 0); /* vec3 */
    assert_int_equal(c.objective.forward_set, 1);          /* vec3 or null */
    assert_near(c.objective.forward[2], 0.8, 0);
    assert_string_equal(c.output.dir, "out dir/x");
    assert_int_equal(c.cmaes.seed, -42);

    assert_int_equal(mlc_config_set(&c, "objective.forward=null", &err), MLC_OK);
    assert_int_equal(c.objective.forward_set, 0);
    assert_near(c.objective.forward[2], 0, 0);
    assert_int_equal(mlc_config_set(&c, "mesh.path=\"quoted.mesh\"", &err), MLC_OK);
    assert_string_equal(c.mesh.path, "quoted.mesh");
    assert_int_equal(mlc_config_set(&c, "output.dir=123", &err), MLC_OK); /* verbatim */
    assert_string_equal(c.output.dir, "123");
    assert_int_equal(mlc_config_set(&c, "mesh.path=", &err), MLC_OK);
    assert_string_equal(c.mesh.path, "");
    assert_int_equal(mlc_config_set(&c, "sim.steps=3.0", &err), MLC_OK);
    assert_int_equal(c.sim.steps, 3);
    assert_int_equal(mlc_config_set(&c, "actuation.fixed_periods=0.4", &err), MLC_OK);
    assert_int_equal(c.actuation.nfixed_periods, 1);
    assert_near(c.actuation.fixed_periods[0], 0.4, 0);
    assert_near(c.actuation.fixed_periods[1], 0, 0); /* the old tail is cleared */
    assert_int_equal(mlc_config_set(&c, "sim={\"dt\": 0.02, \"steps\": 7}", &err), MLC_OK);
    assert_near(c.sim.dt, 0.02, 0);
    assert_int_equal(c.sim.steps, 7);
    assert_int_equal(mlc_config_set(&c, "actuation.mode_list=[]", &err), MLC_OK);
    assert_int_equal(c.actuation.nmode_list, 0);

    assert_int_equal(mlc_config_set(&c, "sim.steps", &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "--set: expected KEY=VALUE"));
    assert_int_equal(mlc_config_set(&c, "=3", &err), MLC_EINVAL);
}

static void unknown_keys_should_suggest_the_closest(void **state) {
    (void)state;
    mlc_config c;
    mlc_err err;
    char path[64], want[256];
    mlc_config_defaults(&c);
    assert_int_equal(load_text(&c, "{\"sim\": {\"step\": 3}}", path, &err), MLC_EINVAL);
    snprintf(want, sizeof want, "%s: unknown key 'sim.step'; did you mean 'sim.steps'?", path);
    assert_string_equal(err.msg, want);

    /* Wrong section, misplaced key, --set, and nothing near at all. */
    assert_int_equal(load_text(&c, "{\"simulation\": {\"steps\": 3}}", path, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "unknown key 'simulation.steps'; did you mean 'sim.steps'?"));
    assert_int_equal(load_text(&c, "{\"contact\": {\"dt\": 0.1}}", path, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "unknown key 'contact.dt'; did you mean 'sim.dt'?"));
    assert_int_equal(mlc_config_set(&c, "material.densty=3", &err), MLC_EINVAL);
    assert_string_equal(err.msg,
                        "--set: unknown key 'material.densty'; did you mean 'material.density'?");
    assert_int_equal(mlc_config_set(&c, "parameters=[]", &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "did you mean 'actuation.parameters'?"));
    /* Names from other tools point to our key, yet are never accepted: pycma's popsize and
     * maxiter, the papers' lambda, also inside a section. */
    const char *alias[][2] = {{"popsize=10", "cmaes.population"},
                              {"lambda=10", "cmaes.population"},
                              {"cmaes.maxiter=5", "cmaes.generations"},
                              {"maxfevals=100", "cmaes.budget"},
                              {"sigma=0.2", "cmaes.sigma0"},
                              {"nthreads=2", "parallel.threads"}};
    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++) {
        assert_int_equal(mlc_config_set(&c, alias[i][0], &err), MLC_EINVAL);
        snprintf(want, sizeof want, "did you mean '%s'?", alias[i][1]);
        assert_non_null(strstr(err.msg, want));
    }
    assert_int_equal(load_text(&c, "{\"cmaes\": {\"popsize\": 8}}", path, &err), MLC_EINVAL);
    assert_non_null(
        strstr(err.msg, "unknown key 'cmaes.popsize'; did you mean 'cmaes.population'?"));
    /* A word that merely contains an alias is no alias. */
    assert_int_equal(mlc_config_set(&c, "sigmas=1", &err), MLC_EINVAL);
    assert_null(strstr(err.msg, "population"));
    assert_int_equal(mlc_config_set(&c, "xyzzy.plugh=1", &err), MLC_EINVAL);
    assert_null(strstr(err.msg, "did you mean"));
    assert_non_null(strstr(err.msg, "--set: unknown key 'xyzzy.plugh'"));

    assert_int_equal(load_text(&c, "{\"sim\": {\"dt\": 0.1, \"dt\": 0.2}}", path, &err),
                     MLC_EINVAL);
    assert_non_null(strstr(err.msg, "key 'sim.dt' is given twice"));
    /* Nothing was applied by the failed loads. */
    mlc_config d;
    mlc_config_defaults(&d);
    assert_memory_equal(&c, &d, sizeof c);
}

static void wrong_types_should_be_named(void **state) {
    (void)state;
    mlc_config c;
    mlc_err err;
    char path[64], want[256];
    mlc_config_defaults(&c);
    assert_int_equal(load_text(&c, "{\"sim\": {\"steps\": \"300\"}}", path, &err), MLC_EINVAL);
    snprintf(want, sizeof want, "%s: key 'sim.steps' must be an integer, got string", path);
    assert_memory_equal(err.msg, want, strlen(want));

    static const struct {
        const char *set, *msg;
    } cases[] = {
        {"sim.steps=3.5", "--set: key 'sim.steps' must be an integer, got 3.5"},
        {"sim.steps=1e20", "--set: key 'sim.steps' = 1e+20 does not fit in an integer"},
        {"sim.steps=3000000000", "does not fit in an integer"},
        {"sim.dt=1e999", "key 'sim.dt' is not a finite number"},
        {"reference.tolerance=-1e-6", "key 'reference.tolerance' = -1e-06 is out of range; "
                                      "valid: >= 0"},
        {"reference.max_iterations=0", "key 'reference.max_iterations' = 0 is out of range; "
                                       "valid: >= 1"},
        {"sim.dt=fast", "--set: key 'sim.dt' must be a number, got string \"fast\""},
        {"mesh.normalize=1", "key 'mesh.normalize' must be a boolean (true or false), got number"},
        {"sim.gravity=[0,-9.81]", "key 'sim.gravity' must be [x, y, z] (3 numbers), got array"},
        {"sim.gravity=[0,\"a\",0]", "key 'sim.gravity[1]' must be a number, got string"},
        {"actuation.mode_list=[1,2.5]", "key 'actuation.mode_list[1]' must be an integer"},
        {"actuation.mode_list=3", "key 'actuation.mode_list' must be an array of integers"},
        {"actuation.period_range=0.3", "key 'actuation.period_range' must be [min, max]"},
        {"objective.forward=true", "must be [x, y, z] (3 numbers) or null, got boolean true"},
        {"sim=3", "--set: key 'sim' must be an object of settings, got number 3"},
        {"actuation.parameters=[{\"mode\": 0}]", "lacks member 'sinusoids'"},
        {"actuation.parameters=[{\"mode\": 0, \"sinusoids\": [{\"amplitude\": 1, \"perod\": 1, "
         "\"phase\": 0}]}]",
         "unknown member 'perod' in 'actuation.parameters[0].sinusoids[0]'"},
        {"actuation.parameters=[{\"mode\": 0, \"sinusoids\": []}]", "has 0 sinusoids; valid: 1..8"},
        {"actuation.parameters=[{\"mode\": \"0\", \"sinusoids\": []}]",
         "key 'actuation.parameters[0].mode' must be an integer, got string"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (mlc_config_set(&c, cases[i].set, &err) != MLC_EINVAL)
            fail_msg("%s: accepted", cases[i].set);
        if (!strstr(err.msg, cases[i].msg))
            fail_msg("%s: message '%s' lacks '%s'", cases[i].set, err.msg, cases[i].msg);
    }
    char long_path[5000];
    memset(long_path, 'a', sizeof long_path);
    memcpy(long_path, "mesh.path=", 10);
    long_path[sizeof long_path - 1] = '\0';
    assert_int_equal(mlc_config_set(&c, long_path, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "key 'mesh.path' is too long"));

    /* Top level must be an object; an empty object changes nothing. */
    assert_int_equal(load_text(&c, "[1, 2]", path, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "top level must be a JSON object"));
    assert_int_equal(load_text(&c, "{}", path, &err), MLC_OK);
    assert_int_equal(load_text(&c, "\xEF\xBB\xBF{\"sim\": {}}\n", path, &err), MLC_OK);
    mlc_config d;
    mlc_config_defaults(&d);
    assert_memory_equal(&c, &d, sizeof c);

    assert_int_equal(mlc_config_load_file(&c, "/nonexistent/dir/run.json", &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "/nonexistent/dir/run.json: cannot open"));
}

static void malformed_json_should_give_line_and_column(void **state) {
    (void)state;
    mlc_config c;
    mlc_err err;
    char path[64], want[256];
    mlc_config_defaults(&c);
    /* cJSON gives up just after the trailing comma's '}', at line 2, column 23. */
    assert_int_equal(load_text(&c, "{\n  \"sim\": {\"dt\": 0.01,}\n}\n", path, &err), MLC_EPARSE);
    snprintf(want, sizeof want, "%s:2:23: malformed JSON near '\"dt\": 0.01,}'", path);
    assert_string_equal(err.msg, want);

    assert_int_equal(load_text(&c, "{\"sim\":\n\n   {\"dt\": tru}}", path, &err), MLC_EPARSE);
    snprintf(want, sizeof want, "%s:3:", path);
    assert_memory_equal(err.msg, want, strlen(want));

    assert_int_equal(load_text(&c, "", path, &err), MLC_EPARSE);
    snprintf(want, sizeof want, "%s:1:1: malformed JSON near end of input", path);
    assert_string_equal(err.msg, want);

    assert_int_equal(load_text(&c, "{} trailing", path, &err), MLC_EPARSE);
    snprintf(want, sizeof want, "%s:1:4: malformed JSON near '{} trailing'", path);
    assert_string_equal(err.msg, want);
}

/* Every validated key: a bad value must be refused by --set (naming --set, the key, the value
 * and the range) and, written straight into the struct, by mlc_config_validate. */
static void out_of_range_values_should_be_refused(void **state) {
    (void)state;
    static const struct {
        const char *set;   /* the assignment */
        const char *key;   /* the key the message must name */
        const char *value; /* how the value appears */
    } cases[] = {
        {"mesh.extent=0", "mesh.extent", "0"},
        {"mesh.up=[0,0,0]", "mesh.up", "[0, 0, 0]"},
        {"mesh.up=z", "mesh.up", "\"z\""},
        {"material.density=-1", "material.density", "-1"},
        {"material.mu=0", "material.mu", "0"},
        {"material.gamma=-5", "material.gamma", "-5"},
        {"material.poisson_modes=0.5", "material.poisson_modes", "0.5"},
        {"material.poisson_modes=-1", "material.poisson_modes", "-1"},
        {"subspace.skinning_modes=0", "subspace.skinning_modes", "0"},
        {"subspace.skinning_modes=33", "subspace.skinning_modes", "33"},
        {"subspace.passive_clusters=0", "subspace.passive_clusters", "0"},
        {"subspace.actuation_clusters=0", "subspace.actuation_clusters", "0"},
        {"subspace.contact_samples=0", "subspace.contact_samples", "0"},
        {"subspace.contact_spacing=-0.01", "subspace.contact_spacing", "-0.01"},
        {"subspace.contact_spacing=1.5", "subspace.contact_spacing", "1.5"},
        {"actuation.modes=65", "actuation.modes", "65"},
        {"actuation.local_modes=-1", "actuation.local_modes", "-1"},
        {"actuation.local_modes=65", "actuation.local_modes", "65"},
        {"actuation.localization=-0.5", "actuation.localization", "-0.5"},
        {"actuation.modes=65", "actuation.modes", "65"},
        {"actuation.mode_list=[1,-1]", "actuation.mode_list[1]", "-1"},
        {"actuation.mode_list=[1,2,1]", "actuation.mode_list", "1 twice"},
        {"actuation.sinusoids=0", "actuation.sinusoids", "0"},
        {"actuation.sinusoids=9", "actuation.sinusoids", "9"},
        {"actuation.period_range=[0,0.5]", "actuation.period_range", "[0, 0.5]"},
        {"actuation.period_range=[0.6,0.2]", "actuation.period_range", "[0.6, 0.2]"},
        {"actuation.phase_range=[1,0]", "actuation.phase_range", "[1, 0]"},
        {"actuation.amplitude_p=0", "actuation.amplitude_p", "0"},
        {"actuation.amplitude_bound=sum", "actuation.amplitude_bound", "\"sum\""},
        {"actuation.ramp=-0.1", "actuation.ramp", "-0.1"},
        {"actuation.fixed_periods=[0.3,-0.1]", "actuation.fixed_periods[1]", "-0.1"},
        {"actuation.select=-1", "actuation.select", "-1"},
        {"actuation.parameters=[{\"mode\": -1, \"sinusoids\": [{\"amplitude\": 1, \"period\": "
         "1, \"phase\": 0}]}]",
         "actuation.parameters[0].mode", "-1"},
        {"actuation.parameters=[{\"mode\": 0, \"sinusoids\": [{\"amplitude\": 1, \"period\": "
         "0, \"phase\": 0}]}]",
         "actuation.parameters[0].sinusoids[0]", "period 0"},
        {"sim.dt=0", "sim.dt", "0"},
        {"sim.steps=0", "sim.steps", "0"},
        {"sim.iterations=0", "sim.iterations", "0"},
        {"sim.tolerance=-1e-9", "sim.tolerance", "-1e-09"},
        {"sim.initial_guess=zero", "sim.initial_guess", "\"zero\""},
        {"contact.damping=1", "contact.damping", "1"},
        {"contact.damping=-0.1", "contact.damping", "-0.1"},
        {"contact.projection=impulse", "contact.projection", "\"impulse\""},
        {"objective.kind=swim", "objective.kind", "\"swim\""},
        {"objective.direction=[0,0,0]", "objective.direction", "[0, 0, 0]"},
        {"objective.forward=[0,0,0]", "objective.forward", "[0, 0, 0]"},
        {"objective.work_penalty=-1", "objective.work_penalty", "-1"},
        {"cmaes.population=1", "cmaes.population", "1"},
        {"cmaes.generations=0", "cmaes.generations", "0"},
        {"cmaes.sigma0=-0.1", "cmaes.sigma0", "-0.1"},
        {"cmaes.restarts=-1", "cmaes.restarts", "-1"},
        {"cmaes.restart_strategy=lipop", "cmaes.restart_strategy", "\"lipop\""},
        {"cmaes.restart_collapse=-0.1", "cmaes.restart_collapse", "-0.1"},
        {"cmaes.restart_stall=-1", "cmaes.restart_stall", "-1"},
        {"cmaes.restart_room=-0.5", "cmaes.restart_room", "-0.5"},
        {"cmaes.diagonal=-2", "cmaes.diagonal", "-2"},
        {"cmaes.mean_every=-1", "cmaes.mean_every", "-1"},
        {"cmaes.budget=-1", "cmaes.budget", "-1"},
        {"output.dir=\"\"", "output.dir", "\"\""},
        {"output.every=0", "output.every", "0"},
        {"parallel.threads=-1", "parallel.threads", "-1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mlc_config c, before;
        mlc_err err;
        mlc_config_defaults(&c);
        before = c;
        if (mlc_config_set(&c, cases[i].set, &err) != MLC_EINVAL)
            fail_msg("%s: accepted", cases[i].set);
        char want[160];
        snprintf(want, sizeof want, "--set: key '%s", cases[i].key);
        if (strncmp(err.msg, want, strlen(want)) != 0 || !strstr(err.msg, cases[i].value) ||
            !strstr(err.msg, "valid: "))
            fail_msg("%s: message '%s'", cases[i].set, err.msg);
        assert_memory_equal(&c, &before, sizeof c);

        /* The same value placed directly in the struct must fail validation with the same
         * text (minus the source). */
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(strchr(cases[i].set, '=') - cases[i].set),
                 cases[i].set);
        const mlc_config_section *sec = NULL;
        const mlc_key *k = mlc_config_key_find(name, &sec);
        assert_non_null(k);
        cJSON *v = cJSON_Parse(strchr(cases[i].set, '=') + 1);
        if (!v) v = cJSON_CreateString(strchr(cases[i].set, '=') + 1);
        char *base = (char *)&c + sec->offset, *p = base + k->offset;
        switch (k->type) {
        case MLC_KEY_ENUM: /* a number that names no choice */
            *(int *)p = 99;
            break;
        case MLC_KEY_STRING:
            strcpy(p, v->valuestring);
            break;
        case MLC_KEY_INT:
            *(int *)p = v->valueint;
            break;
        case MLC_KEY_NUMBER:
            *(double *)p = v->valuedouble;
            break;
        case MLC_KEY_RANGE:
        case MLC_KEY_VEC3:
        case MLC_KEY_VEC3_OR_NULL: {
            int n = cJSON_GetArraySize(v);
            for (int e = 0; e < n; e++)
                ((double *)p)[e] = cJSON_GetArrayItem(v, e)->valuedouble;
            if (k->type == MLC_KEY_VEC3_OR_NULL) *(int *)(base + k->count_offset) = 1;
            break;
        }
        case MLC_KEY_INT_ARRAY:
        case MLC_KEY_NUMBER_ARRAY: {
            int n = cJSON_GetArraySize(v);
            for (int e = 0; e < n; e++) {
                if (k->type == MLC_KEY_INT_ARRAY)
                    ((int *)p)[e] = cJSON_GetArrayItem(v, e)->valueint;
                else
                    ((double *)p)[e] = cJSON_GetArrayItem(v, e)->valuedouble;
            }
            *(int *)(base + k->count_offset) = n;
            break;
        }
        case MLC_KEY_AXIS: {
            double *vec = (double *)(base + k->count_offset);
            memset(p, 0, (size_t)k->capacity);
            if (cJSON_IsString(v)) {
                strcpy(p, v->valuestring);
            } else {
                for (int e = 0; e < 3; e++)
                    vec[e] = cJSON_GetArrayItem(v, e)->valuedouble;
            }
            break;
        }
        case MLC_KEY_PARAMETERS: {
            const cJSON *e = cJSON_GetArrayItem(v, 0);
            const cJSON *s = cJSON_GetArrayItem(cJSON_GetObjectItem(e, "sinusoids"), 0);
            c.actuation.nparameters = 1;
            c.actuation.parameters[0].mode = cJSON_GetObjectItem(e, "mode")->valueint;
            c.actuation.parameters[0].nsinusoids = 1;
            c.actuation.parameters[0].sinusoids[0].amplitude =
                cJSON_GetObjectItem(s, "amplitude")->valuedouble;
            c.actuation.parameters[0].sinusoids[0].period =
                cJSON_GetObjectItem(s, "period")->valuedouble;
            break;
        }
        default:
            fail_msg("%s: unhandled type", cases[i].set);
        }
        cJSON_Delete(v);
        assert_int_equal(mlc_config_validate(&c, &err), MLC_EINVAL);
        if (strncmp(err.msg, want + 7, strlen(want) - 7) != 0)
            fail_msg("%s: validate said '%s'", cases[i].set, err.msg);
    }
}

static void params_json_should_load_config_and_parameters(void **state) {
    (void)state;
    const char *params =
        "{\n"
        "  \"version\": \"0.1.0\", \"seed\": 7, \"J\": -1.5, \"J_disp\": -1.6,\n"
        "  \"mesh_checksum\": \"abcd\", \"transform\": {\"scale\": 2},\n"
        "  \"config\": {\"mesh\": {\"path\": \"bat.mesh\"}, \"sim\": {\"steps\": 120},\n"
        "             \"actuation\": {\"modes\": 2, \"sinusoids\": 2}},\n"
        "  \"parameters\": [\n"
        "    {\"mode\": 0, \"sinusoids\": [{\"amplitude\": 0.5, \"period\": 0.3, \"phase\": 0.1},\n"
        "                               {\"amplitude\": -0.25, \"period\": 0.5, \"phase\": 0}]},\n"
        "    {\"mode\": 1, \"sinusoids\": [{\"amplitude\": 0.125, \"period\": 0.4, \"phase\": "
        "1}]}\n"
        "  ]\n"
        "}\n";
    mlc_config c;
    mlc_err err;
    char path[64];
    mlc_config_defaults(&c);
    if (load_text(&c, params, path, &err) != MLC_OK) fail_msg("%s", err.msg);
    assert_string_equal(c.mesh.path, "bat.mesh");
    assert_int_equal(c.sim.steps, 120);
    assert_int_equal(c.actuation.modes, 2);
    assert_int_equal(c.cmaes.seed, 1); /* top-level "seed" is informational, not cmaes.seed */
    assert_int_equal(c.actuation.nparameters, 2);
    assert_int_equal(c.actuation.parameters[0].nsinusoids, 2);
    assert_near(c.actuation.parameters[0].sinusoids[1].amplitude, -0.25, 0);
    assert_near(c.actuation.parameters[0].sinusoids[1].period, 0.5, 0);
    assert_int_equal(c.actuation.parameters[1].mode, 1);
    assert_near(c.actuation.parameters[1].sinusoids[0].phase, 1, 0);
    assert_int_equal(mlc_config_validate(&c, &err), MLC_OK);

    /* What optimize will write: the effective config from mlc_config_to_cjson plus parameters
     * must load back to the same struct. */
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "J", -2);
    cJSON_AddItemToObject(doc, "config", mlc_config_to_cjson(&c));
    cJSON *all = mlc_config_to_cjson(&c);
    cJSON_AddItemToObject(
        doc, "parameters",
        cJSON_DetachItemFromObject(cJSON_GetObjectItem(all, "actuation"), "parameters"));
    cJSON_Delete(all);
    mlc_config d;
    mlc_config_defaults(&d);
    assert_int_equal(mlc_config_apply_json(&d, doc, "params.json", &err), MLC_OK);
    assert_memory_equal(&c, &d, sizeof c);

    /* Errors inside the parameters name them. */
    cJSON_ReplaceItemInObject(doc, "parameters", cJSON_CreateString("none"));
    assert_int_equal(mlc_config_apply_json(&d, doc, "params.json", &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "params.json: key 'parameters' must be an array"));
    cJSON_Delete(doc);
}

/* actuation.modes = 0 means "local modes only": refused without local modes, with a message
 * that names both keys. */
static void zero_modes_should_need_local_modes(void **state) {
    (void)state;
    mlc_config c;
    mlc_err err;
    mlc_config_defaults(&c);
    assert_int_equal(mlc_config_set(&c, "actuation.modes=0", &err), MLC_OK);
    assert_int_equal(mlc_config_validate(&c, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "actuation.modes"));
    assert_non_null(strstr(err.msg, "actuation.local_modes"));
    assert_int_equal(mlc_config_set(&c, "actuation.local_modes=2", &err), MLC_OK);
    assert_int_equal(mlc_config_validate(&c, &err), MLC_OK);
}

/* Restarts need something that ends a run; a budget must hold one generation at its worst. */
static void restarts_and_budget_should_be_checked_together(void **state) {
    (void)state;
    mlc_config c;
    mlc_err err;
    mlc_config_defaults(&c);
    assert_int_equal(mlc_config_set(&c, "cmaes.restarts=3", &err), MLC_OK);
    assert_int_equal(mlc_config_validate(&c, &err), MLC_OK); /* the triggers are on */
    assert_int_equal(mlc_config_set(&c, "cmaes.restart_collapse=0", &err), MLC_OK);
    assert_int_equal(mlc_config_validate(&c, &err), MLC_OK);
    assert_int_equal(mlc_config_set(&c, "cmaes.restart_stall=0", &err), MLC_OK);
    assert_int_equal(mlc_config_validate(&c, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "'cmaes.restarts' = 3"));
    assert_non_null(strstr(err.msg, "cmaes.restart_stall"));
    assert_int_equal(mlc_config_set(&c, "cmaes.restart_stall=50", &err), MLC_OK);
    assert_int_equal(mlc_config_validate(&c, &err), MLC_OK);
    /* (16 + 1) x (2 + 1) = 51 rollouts: one generation with two replays each. */
    assert_int_equal(mlc_config_set(&c, "cmaes.robust_samples=2", &err), MLC_OK);
    assert_int_equal(mlc_config_set(&c, "cmaes.budget=50", &err), MLC_OK);
    assert_int_equal(mlc_config_validate(&c, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "'cmaes.budget' = 50"));
    assert_non_null(strstr(err.msg, "51"));
    assert_int_equal(mlc_config_set(&c, "cmaes.budget=51", &err), MLC_OK);
    assert_int_equal(mlc_config_validate(&c, &err), MLC_OK);
}

static void fixed_periods_count_should_be_0_1_or_m_times_k(void **state) {
    (void)state;
    mlc_config c;
    mlc_err err;
    mlc_config_defaults(&c);
    c.actuation.modes = 10; /* m = 10, k = 2 */
    int counts_ok[] = {0, 1, 20};
    for (int i = 0; i < 3; i++) {
        c.actuation.nfixed_periods = counts_ok[i];
        for (int j = 0; j < counts_ok[i]; j++)
            c.actuation.fixed_periods[j] = 0.3;
        assert_int_equal(mlc_config_validate(&c, &err), MLC_OK);
    }
    c.actuation.nfixed_periods = 3;
    assert_int_equal(mlc_config_validate(&c, &err), MLC_EINVAL);
    assert_string_equal(err.msg, "key 'actuation.fixed_periods' has 3 values; valid: 0, 1 or "
                                 "m*k = 20 (m = 10 modes, k = 2 sinusoids)");
    /* An explicit mode list sets m. */
    assert_int_equal(mlc_config_set(&c, "actuation.mode_list=[4,5,6]", &err), MLC_OK);
    c.actuation.nfixed_periods = 6;
    assert_int_equal(mlc_config_validate(&c, &err), MLC_OK);
    c.actuation.nfixed_periods = 20;
    assert_int_equal(mlc_config_validate(&c, &err), MLC_EINVAL);
    /* select can not exceed m. */
    c.actuation.nfixed_periods = 0;
    c.actuation.select = 4;
    assert_int_equal(mlc_config_validate(&c, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "key 'actuation.select' = 4 is out of range; valid: 0..m"));
    c.actuation.select = 3;
    assert_int_equal(mlc_config_validate(&c, &err), MLC_OK);
}

static void comment_should_be_ignored_but_type_checked(void **state) {
    (void)state;
    mlc_config cfg, ref;
    mlc_err err;
    char path[64];
    mlc_config_defaults(&cfg);
    mlc_config_defaults(&ref);
    ref.sim.steps = 7;
    assert_int_equal(
        load_text(&cfg, "{\"comment\": [\"what\", \"why\"], \"sim\": {\"steps\": 7}}", path, &err),
        MLC_OK);
    assert_memory_equal(&cfg, &ref, sizeof cfg);
    assert_int_equal(load_text(&cfg, "{\"comment\": \"one line\"}", path, &err), MLC_OK);
    assert_int_equal(load_text(&cfg, "{\"comment\": 3}", path, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "comment"));
}

static void allocation_failures_should_be_reported(void **state) {
    (void)state;
    mlc_config c, d;
    mlc_err err;
    mlc_config_defaults(&c);
    d = c;
    mlc_alloc_fail_after(1);
    assert_int_equal(mlc_config_set(&c, "sim.steps=5", &err), MLC_ENOMEM);
    mlc_alloc_fail_after(0);
    assert_memory_equal(&c, &d, sizeof c);
    /* to_json's own copy is the only counted allocation. */
    mlc_alloc_fail_after(1);
    assert_null(mlc_config_to_json(&c));
    mlc_alloc_fail_after(0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_should_match_interface_table),
        cmocka_unit_test(key_tables_should_hold_their_properties),
        cmocka_unit_test(objective_kinds_should_agree_with_the_key),
        cmocka_unit_test(json_round_trip_should_reproduce_the_struct),
        cmocka_unit_test(mesh_path_should_be_found_next_to_the_config),
        cmocka_unit_test(set_should_parse_each_type),
        cmocka_unit_test(unknown_keys_should_suggest_the_closest),
        cmocka_unit_test(mesh_up_should_take_names_and_vectors),
        cmocka_unit_test(wrong_types_should_be_named),
        cmocka_unit_test(malformed_json_should_give_line_and_column),
        cmocka_unit_test(out_of_range_values_should_be_refused),
        cmocka_unit_test(params_json_should_load_config_and_parameters),
        cmocka_unit_test(fixed_periods_count_should_be_0_1_or_m_times_k),
        cmocka_unit_test(zero_modes_should_need_local_modes),
        cmocka_unit_test(restarts_and_budget_should_be_checked_together),
        cmocka_unit_test(comment_should_be_ignored_but_type_checked),
        cmocka_unit_test(allocation_failures_should_be_reported),
    };
    return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}

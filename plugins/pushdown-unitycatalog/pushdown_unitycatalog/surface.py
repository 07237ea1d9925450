"""Unity Catalog's authorization surface (the open server's ``SecurableType`` and
``Privilege`` enums, its principals and ownership) and what pushdown does with each entry
(:mod:`pushdown.reconcile.surface`; docs/unitycatalog.md publishes this table)."""

from __future__ import annotations

from pushdown.reconcile.surface import SurfaceEntry, Treatment

H, G, R, N = Treatment.HANDLED, Treatment.GOVERNED, Treatment.REPORTED, Treatment.NARROWED
T = "plugins/pushdown-unitycatalog/pushdown_unitycatalog/tests/"
SYNC = T + "test_uc_sync.py::"
PURE = T + "test_uc_pure.py::"
REVIEW = T + "test_uc_review.py::"
ADV = T + "test_uc_adversary.py::test_the_unitycatalog_backend_is_never_wider_than_the_evaluator"

SURFACE: tuple[SurfaceEntry, ...] = (
    SurfaceEntry(
        "securable.catalog", "securable type", "catalog", (H, G),
        "USE CATALOG and CREATE SCHEMA written where the model allows load_catalog / create_schema; "
        "any other privilege a managed principal holds there is revoked",
        (SYNC + "test_demo_spec_applies_reads_back_and_a_second_plan_is_empty",
         SYNC + "test_hand_made_grants_to_a_managed_principal_are_revoked", ADV),
    ),
    SurfaceEntry(
        "securable.catalog.others", "securable type", "the server's catalogs pushdown does not enforce", R,
        "a full read lists them: a managed principal's privileges on one (USE CATALOG…) or its ownership "
        "are findings, left alone (every call inside a catalog asks for one or the other)",
        (REVIEW + "test_what_a_managed_principal_holds_in_a_catalog_pushdown_does_not_enforce_is_reported",),
    ),
    SurfaceEntry(
        "securable.schema", "securable type", "schema", (H, G),
        "USE SCHEMA, CREATE TABLE, and SELECT / MODIFY when every table there (and a new one) decides alike",
        (SYNC + "test_a_schema_grant_only_where_every_table_decides_alike",
         SYNC + "test_hand_made_grants_to_a_managed_principal_are_revoked"),
    ),
    SurfaceEntry(
        "securable.table", "securable type", "table", (H, G),
        "SELECT / MODIFY per table where the schema's tables differ (DENY, owners, grants of their own)",
        (SYNC + "test_the_server_decides_as_the_evaluator_for_every_user", ADV),
    ),
    SurfaceEntry(
        "securable.metastore", "securable type", "metastore (not inherited by catalogs)", R,
        "a managed principal's metastore privileges (CREATE CATALOG…) are findings, left alone",
        (SYNC + "test_grants_to_others_are_left_alone_and_reported",),
    ),
    SurfaceEntry(
        "securable.leaves", "securable type", "function, volume, registered_model", (G, R),
        "listed in each schema read whole (not by a one-table change's read of the schema alone); "
        "nothing is granted on them (the model enforces catalogs, schemas and tables here): every "
        "privilege a managed principal holds on one is revoked; one a managed "
        "principal owns (created) is a finding (the listing's owner: the permissions API shows no OWNER)",
        (SYNC + "test_hand_made_grants_to_a_managed_principal_are_revoked",
         REVIEW + "test_functions_volumes_models_and_storage_a_managed_principal_owns_are_reported"),
    ),
    SurfaceEntry(
        "securable.storage", "securable type", "external_location, credential", R,
        "nothing pushdown writes reaches them and no table inherits them: a managed principal's grants "
        "on one (READ FILES…), and their ownership of one (the listing's owner), are findings, left alone",
        (SYNC + "test_grants_to_others_are_left_alone_and_reported",
         REVIEW + "test_functions_volumes_models_and_storage_a_managed_principal_owns_are_reported"),
    ),
    SurfaceEntry(
        "privilege.written", "privilege",
        "USE CATALOG, USE SCHEMA, CREATE SCHEMA, CREATE TABLE, SELECT, MODIFY", H,
        "compiled by operation from the entitlement compiler (docs/unitycatalog.md's table)",
        (PURE + "test_the_mapping_by_operation", SYNC + "test_seed_003_examples_end_as_the_seed_says"),
    ),
    SurfaceEntry(
        "privilege.others", "privilege",
        "CREATE CATALOG, CREATE FUNCTION, EXECUTE, CREATE VOLUME, READ VOLUME, CREATE MODEL, READ FILES, "
        "WRITE FILES, CREATE EXTERNAL TABLE/VOLUME/LOCATION, CREATE MANAGED STORAGE, "
        "CREATE STORAGE CREDENTIAL",
        G,
        "never written; held by a managed principal on the catalog, a schema or a table they are revoked",
        (SYNC + "test_hand_made_grants_to_a_managed_principal_are_revoked", ADV),
    ),
    SurfaceEntry(
        "principal.user", "principal form", "user (e-mail), created through SCIM", (H, G),
        "the fenced ones (setting principals or principal_prefix) are managed: every privilege they hold "
        "in scope is pushdown's to keep or revoke",
        (SYNC + "test_hand_made_grants_to_a_managed_principal_are_revoked", ADV),
    ),
    SurfaceEntry(
        "principal.others", "principal form", "principals outside the fence", R,
        "left alone; a grant to one spelt like a managed principal but for case is a finding",
        (SYNC + "test_grants_to_others_are_left_alone_and_reported", ADV),
    ),
    SurfaceEntry(
        "principal.group", "principal form",
        "groups (Databricks' account groups; none in the open server)", (N, R),
        "model groups expanded to their members; a server grant to a group form (account users) is a finding",
        (SYNC + "test_grants_to_others_are_left_alone_and_reported",
         PURE + "test_groups_are_expanded_with_a_note"),
    ),
    SurfaceEntry(
        "ownership", "ownership", "owner (set at creation; OWNER is no grantable privilege)", N,
        "a model owner gets the privileges an owner uses (USE, SELECT, MODIFY, CREATE), not DROP nor "
        "the right to grant (the permissions API cannot give ownership); a note says so",
        (SYNC + "test_seed_003_examples_end_as_the_seed_says",),
    ),
    SurfaceEntry(
        "ownership.server", "ownership",
        "the catalog, a schema or a table a managed principal created (and so owns)", R,
        "a finding unless the model makes that principal the owner of the same kind of object spelt "
        "exactly so (by its managed, unshared name): ownership passes every check "
        "there (a catalog's, on everything in it) and cannot be revoked through the permissions API",
        (SYNC + "test_what_a_managed_principal_owns_on_the_server_is_reported",
         REVIEW + "test_a_catalog_a_managed_principal_owns_on_the_server_is_reported",
         REVIEW + "test_an_owner_the_model_spells_with_capitals_does_not_hide_the_servers",
         REVIEW + "test_an_owner_of_another_kind_of_object_does_not_hide_the_servers"),
    ),
    SurfaceEntry(
        "setting.token", "setting", "token (whose grants the permissions API shows it)", R,
        "the server shows all grants only to the metastore admin and the owners above a securable: an "
        "empty PATCH (allowed to exactly those) checks the token at every read of a catalog's grants, "
        "scoped or not (a catalog dropped and made again by another owner is seen); a catalog it owns "
        "neither of, nor the "
        "metastore, is left out (nothing read or changed there, the others go on) and a finding says so; "
        "one that is not the metastore admin's makes the metastore, external locations, credentials and "
        "other catalogs a 'not checked' finding",
        (REVIEW + "test_a_token_that_owns_nothing_reads_nothing_rather_than_see_nothing",
         REVIEW + "test_a_catalog_the_token_cannot_read_does_not_hold_back_the_others",
         REVIEW + "test_a_token_that_owns_the_catalog_but_not_the_metastore_says_what_it_cannot_see",
         T + "test_uc_kept_sight.py::test_a_catalog_made_again_by_another_owner_is_not_read_as_the_tokens"),
    ),
    SurfaceEntry(
        "names.case", "names", "names in lower case (Databricks), kept as given (the open server)", N,
        "a schema or table the model spells with capitals gets nothing; a note says so",
        (PURE + "test_capitals_are_narrowed_with_a_note", ADV),
    ),
)  # fmt: skip

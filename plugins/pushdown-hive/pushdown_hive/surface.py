"""The Hive Metastore's authorization surface, field by field from its Thrift model
(``HiveObjectRef``, ``HiveObjectPrivilege`` / ``PrivilegeGrantInfo``, ``Role`` and
``RolePrincipalGrant``, ``Database`` and ``Table`` owners), the special roles, and the
settings that change a decision: what pushdown does with each
(:class:`~pushdown.reconcile.surface.SurfaceEntry`), and the tests that prove it.

The adversary (``tests/test_hive_adversary.py``) draws hostile state from these keys;
``tests/reconcile/test_surface.py`` fails on an entry without a treatment or a test, and
on docs/hive.md when its table differs (``python scripts/surface_docs.py``). Fields that
change no decision (``createTime``, ``grantTime``, a role's ``ownerName``) are not listed.
"""

from __future__ import annotations

from pushdown.reconcile.surface import SurfaceEntry
from pushdown.reconcile.surface import Treatment as T

_T = "plugins/pushdown-hive/pushdown_hive/tests/"
ADVERSARY = _T + "test_hive_adversary.py::test_the_hive_backend_is_never_wider_than_the_evaluator"


def _t(file: str, *names: str) -> tuple[str, ...]:
    return tuple(f"{_T}test_hive_{file}.py::{n}" for n in names)


OBJECTS = (
    SurfaceEntry(
        "object.global",
        "privilege object (HiveObjectType)",
        "GLOBAL (the server)",
        (T.GOVERNED, T.REPORTED),
        "pushdown never grants there: its own grantor's server-level grants are revoked by any sync; "
        "another grantor's reaching a user, a group or a role (but `admin`'s own) are findings",
        (
            *_t(
                "review",
                "test_global_grant_by_our_grantor_to_a_managed_user_is_revoked_or_reported",
                "test_global_grant_by_our_grantor_is_revoked_by_a_one_table_sync",
            ),
            ADVERSARY,
        ),
    ),
    SurfaceEntry(
        "object.database",
        "privilege object (HiveObjectType)",
        "DATABASE",
        (T.HANDLED, T.GOVERNED, T.REPORTED),
        "CREATE there is compiled from `create_table`; any other database-level grant by pushdown's "
        "grantor is revoked, another grantor's reaching a principal is a finding",
        _t("pure", "test_owner_gets_all_and_create_table_gets_create_on_the_database")
        + _t(
            "review",
            "test_database_level_select_by_our_grantor_is_revoked",
            "test_database_level_all_by_another_grantor_is_reported",
        )
        + (ADVERSARY,),
    ),
    SurfaceEntry(
        "object.table",
        "privilege object (HiveObjectType)",
        "TABLE",
        (T.HANDLED, T.GOVERNED, T.REPORTED),
        "compiled per table from the evaluator's decisions (schema ALLOWs expanded to the tables held, "
        "minus the denied); pushdown's unwanted grants revoked, another grantor's are findings",
        _t("sync", "test_apply_matches_the_evaluator_and_a_second_plan_is_empty")
        + _t("pure", "test_a_schema_allow_is_expanded_to_the_tables_held_minus_the_denied")
        + (ADVERSARY,),
    ),
    SurfaceEntry(
        "object.partition",
        "privilege object (HiveObjectType)",
        "PARTITION (with the table parameter PARTITION_LEVEL_PRIVILEGE)",
        T.REPORTED,
        "only Hive's legacy authorizer reads partition grants, and only on a partitioned table whose "
        "PARTITION_LEVEL_PRIVILEGE is true (the SQL-standard one decides on the table): such a table "
        "read is a finding",
        (*_t("surface", "test_partition_level_privileges_on_a_table_read_are_reported"), ADVERSARY),
    ),
    SurfaceEntry(
        "object.column",
        "privilege object (HiveObjectType)",
        "COLUMN (a storage descriptor's column, sd.cols, or a partition column, partitionKeys)",
        T.REPORTED,
        "pushdown manages tables, never columns: every column grant of the tables read, partition "
        "columns included, that reaches a user, a group or a role is a finding (one list_privileges "
        "per column)",
        (
            *_t("review", "test_column_grant_on_a_denied_table_is_revoked_or_reported"),
            *_t("partition_columns", "test_a_column_grant_on_a_partition_column_is_reported"),
            *_t("pure", "test_a_tables_columns_are_its_storage_columns_then_its_partition_columns"),
            ADVERSARY,
        ),
    ),
)

PRINCIPALS = (
    SurfaceEntry(
        "principal.user",
        "principal (PrincipalType)",
        "USER (case folded, trailing blanks dropped by the metastore's database)",
        (T.HANDLED, T.GOVERNED, T.REPORTED),
        "grants compiled per user under the mapped name; pushdown's grants to a name no model user maps "
        "to (removed, an earlier mapping, a padded name) are revoked; another grantor's are findings",
        _t("fail_open", "test_h1_removed_user_under_a_realm_mapping_loses_grants_and_roles")
        + _t(
            "review",
            "test_padded_name_by_our_grantor_is_revoked",
            "test_foreign_grant_to_a_removed_user_is_reported",
        )
        + (ADVERSARY,),
    ),
    SurfaceEntry(
        "principal.role",
        "principal (PrincipalType)",
        "ROLE",
        (T.HANDLED, T.GOVERNED, T.REPORTED),
        "model roles become roles with `role_prefix` where their holders agree; pushdown's grants to "
        "roles without the prefix are revoked; a role outside the fence carrying another's grant is a "
        "finding naming its holders",
        _t("pure", "test_a_role_whose_holders_all_agree_is_a_metastore_role")
        + _t(
            "review",
            "test_hand_role_without_prefix_with_our_grantor_grant_is_revoked",
            "test_hand_role_without_prefix_held_by_a_managed_user_is_revoked_or_reported",
        )
        + (ADVERSARY,),
    ),
    SurfaceEntry(
        "principal.group",
        "principal (PrincipalType)",
        "GROUP",
        (T.GOVERNED, T.REPORTED),
        "pushdown never grants to a group (model groups are expanded to their members); its own grantor's "
        "group grants and a managed role held by a group are revoked; another grantor's are findings",
        _t("review", "test_our_grantor_group_grant_is_revoked_by_a_scoped_sync_of_its_table")
        + _t("fail_open", "test_managed_role_granted_to_a_group_by_hand_is_revoked")
        + _t("review", "test_foreign_group_grant_reaching_a_managed_user_is_reported")
        + (ADVERSARY,),
    ),
    SurfaceEntry(
        "role.public",
        "special role",
        "`public` (every user holds it)",
        (T.GOVERNED, T.REPORTED),
        "never wanted: pushdown's grants to it and a managed role granted to it are revoked; another "
        "grantor's grant to it (a padded name too) is a finding",
        _t("fail_open", "test_hand_made_prefixed_role_and_public_grant_by_the_grantor_are_revoked")
        + _t(
            "review",
            "test_managed_role_granted_to_public_by_hand_is_revoked",
            "test_foreign_grant_to_public_is_reported",
            "test_foreign_grant_to_a_padded_public_role_is_reported",
        )
        + (ADVERSARY,),
    ),
    SurfaceEntry(
        "role.admin",
        "special role",
        "`admin` (every privilege after SET ROLE ADMIN, with grant option)",
        T.REPORTED,
        "its holders are read once per sync: a model user, a group or a role holding it is a finding "
        "(pushdown never grants, drops or revokes the metastore's own roles)",
        (*_t("review", "test_admin_role_granted_to_a_managed_user_is_reported"), ADVERSARY),
    ),
    SurfaceEntry(
        "role.fenced_orphan",
        "principal (PrincipalType)",
        "a ROLE with `role_prefix` that no model role stands for",
        T.GOVERNED,
        "dropped, with whatever it carries and whoever holds it",
        (
            *_t("fail_open", "test_hand_made_prefixed_role_and_public_grant_by_the_grantor_are_revoked"),
            ADVERSARY,
        ),
    ),
    SurfaceEntry(
        "role.nesting",
        "role grant (RolePrincipalGrant)",
        "a role granted to a ROLE (nesting)",
        (T.GOVERNED, T.REPORTED),
        "a role held by a managed role, and a managed role held by a role or a group, are revoked; a "
        "role outside the fence held by another role is a finding naming its holders",
        _t("fail_open", "test_hand_made_role_nested_into_a_managed_role_is_revoked")
        + _t("review", "test_hand_role_granted_to_public_is_revoked_or_reported")
        + (ADVERSARY,),
    ),
)

MODIFIERS = (
    SurfaceEntry(
        "grant.grantor",
        "modifier (PrivilegeGrantInfo)",
        "grantor",
        (T.HANDLED, T.REPORTED),
        "the fence: grants by pushdown's `grantor` are its facts (kept with each), another grantor's "
        "are findings where they reach a principal, or pushdown's with `manage_foreign_grants = true`",
        (
            *_t(
                "pure",
                "test_grants_by_other_hands_are_findings_never_removed_nor_granted_again",
                "test_manage_foreign_grants_takes_them_over",
            ),
            ADVERSARY,
        ),
    ),
    SurfaceEntry(
        "grant.grantor_type",
        "modifier (PrivilegeGrantInfo)",
        "grantorType",
        T.HANDLED,
        "only a USER grantor of pushdown's name is pushdown's; a ROLE of that name is another hand",
        (*_t("pure", "test_a_grant_by_a_role_named_like_the_grantor_is_not_ours"), ADVERSARY),
    ),
    SurfaceEntry(
        "grant.grant_option",
        "modifier (PrivilegeGrantInfo)",
        "grantOption (WITH GRANT OPTION)",
        (T.GOVERNED, T.REPORTED),
        "part of the fact (the model never gives it): pushdown's grant held with it is revoked, or "
        "revoked and granted again without it where the model wants the privilege; another grantor's "
        "is a finding naming the option",
        _t(
            "fail_open",
            "test_n6_a_wanted_role_grant_made_again_with_grant_option_loses_the_option",
            "test_n6_a_wanted_user_grant_made_again_with_grant_option_loses_the_option",
            "test_n6_an_owned_foreign_grant_with_grant_option_is_replaced",
            "test_hand_grant_with_grant_option_by_the_grantor_is_revoked",
        )
        + _t("review", "test_foreign_grant_with_grant_option_to_a_managed_user_is_reported")
        + _t("client", "test_options_owners_and_partition_parameters_read_back")
        + (ADVERSARY,),
    ),
    SurfaceEntry(
        "role.admin_option",
        "role grant (RolePrincipalGrant)",
        "grantOption (WITH ADMIN OPTION)",
        T.GOVERNED,
        "part of a membership (the model never gives it): a managed role held with it is revoked and "
        "granted again without it, or revoked where the model does not want the membership",
        (
            *_t("fail_open", "test_n6_a_managed_membership_made_again_with_admin_option_loses_the_option"),
            ADVERSARY,
        ),
    ),
    SurfaceEntry(
        "role.membership_grantor",
        "role grant (RolePrincipalGrant)",
        "grantorName, grantorPrincipalType of a membership",
        T.GOVERNED,
        "a managed role's USER members are pushdown's whoever granted them: one the model does not "
        "want is revoked by a sync of the role (and every full sync); a USER's membership of a role outside "
        "the fence that pushdown gave (by its grantor, of a role its grantor owns: an earlier role_prefix's) "
        "where another hand's grant (on an object read, the server or a column) or ownership reaches users "
        "through that role, directly or nested, is pushdown's too, never wanted: revoked; the same grantor "
        "name on another owner's role is another hand's (reported)",
        (
            *_t("fail_open", "test_hand_membership_of_a_managed_role_is_revoked_by_a_sync_of_that_role"),
            *_t(
                "review",
                "test_role_prefix_changed_foreign_grant_on_the_old_role_still_reported",
                "test_role_prefix_changed_hand_role_nested_into_the_old_role_reaches_nobody",
                "test_role_prefix_changed_server_grant_on_the_old_role_reaches_nobody",
                "test_a_role_pushdown_did_not_create_keeps_a_membership_granted_in_its_name",
            ),
            *_t("pure", "test_without_a_fence_a_membership_pushdown_gave_is_revoked_and_read_back_alone"),
            ADVERSARY,
        ),
    ),
)

OWNERS = (
    SurfaceEntry(
        "owner.table",
        "owner",
        "Table.owner (and ownerType, Hive 3 on)",
        T.REPORTED,
        "HiveServer2 gives a table's owner DROP, ALTER and GRANT with no grant row: an owner that is a "
        "model user the model does not make that table's owner, or a role or group, is a finding",
        (*_t("review", "test_table_owner_set_by_hand_to_a_managed_user_is_reported"), ADVERSARY),
    ),
    SurfaceEntry(
        "owner.database",
        "owner",
        "Database.ownerName and ownerType",
        T.REPORTED,
        "one get_database per database read: an owner that is a model user the model does not make the "
        "schema's owner, or any role or group, is a finding (an owner may create and drop tables there)",
        (
            *_t(
                "surface",
                "test_database_owner_set_by_hand_to_a_managed_user_is_reported",
                "test_database_owner_of_role_type_is_reported",
                "test_database_owned_by_a_user_outside_the_model_is_no_finding",
            ),
            ADVERSARY,
        ),
    ),
)

PRIVILEGES = (
    SurfaceEntry(
        "privilege.select",
        "privilege name",
        "SELECT (`Select` in the legacy spelling: names are upper-cased)",
        T.HANDLED,
        "granted on a table exactly where the evaluator authorizes `load_table`",
        (*_t("sync", "test_apply_matches_the_evaluator_and_a_second_plan_is_empty"), ADVERSARY),
    ),
    SurfaceEntry(
        "privilege.modify",
        "privilege name",
        "INSERT, UPDATE, DELETE",
        T.HANDLED,
        "granted on a table exactly where the evaluator authorizes `alter_table`",
        (*_t("sync", "test_apply_matches_the_evaluator_and_a_second_plan_is_empty"), ADVERSARY),
    ),
    SurfaceEntry(
        "privilege.all",
        "privilege name",
        "ALL",
        T.HANDLED,
        "granted on a table instead of the four where the evaluator authorizes `drop_table` (its owner)",
        (*_t("pure", "test_owner_gets_all_and_create_table_gets_create_on_the_database"), ADVERSARY),
    ),
    SurfaceEntry(
        "privilege.create",
        "privilege name",
        "CREATE (on a database)",
        T.HANDLED,
        "granted on a database exactly where the evaluator authorizes `create_table` there",
        (*_t("pure", "test_owner_gets_all_and_create_table_gets_create_on_the_database"), ADVERSARY),
    ),
    SurfaceEntry(
        "privilege.other",
        "privilege name",
        "ALTER, DROP, INDEX, LOCK (and any other name)",
        (T.GOVERNED, T.REPORTED),
        "pushdown never grants them: its own grantor's are revoked, another grantor's are findings",
        (*_t("surface", "test_privileges_pushdown_never_grants_are_revoked_or_reported"), ADVERSARY),
    ),
)

SETTINGS = (
    SurfaceEntry(
        "setting.manage_foreign_grants",
        "setting (pushdown)",
        "manage_foreign_grants",
        T.HANDLED,
        "true: every grant on the catalog's objects is pushdown's (revoked, or replaced without its "
        "option, where the model does not want it); false: another grantor's are findings",
        _t("pure", "test_manage_foreign_grants_takes_them_over")
        + _t("review", "test_hand_role_without_prefix_is_revoked_when_the_backend_owns_foreign_grants")
        + (ADVERSARY,),
    ),
    SurfaceEntry(
        "setting.grantor",
        "setting (pushdown)",
        "grantor, changed underneath",
        T.REPORTED,
        "the old grantor's grants are outside the fence: findings where they reach a user or a held role",
        (
            *_t(
                "review",
                "test_grantor_changed_old_grants_reaching_a_managed_user_are_reported",
                "test_grantor_changed_old_grants_on_a_managed_role_are_reported",
            ),
            ADVERSARY,
        ),
    ),
    SurfaceEntry(
        "setting.role_prefix",
        "setting (pushdown)",
        "role_prefix, changed underneath",
        (T.GOVERNED, T.REPORTED),
        "pushdown's grants to the old roles are revoked by the syncs that read their objects; the old "
        "roles are named with their holders while they carry another grantor's grant",
        _t("fail_open", "test_role_prefix_changed_underneath_a_scoped_sync_revokes_the_old_roles_grants")
        + _t("review", "test_role_prefix_changed_foreign_grant_on_the_old_role_still_reported")
        + (ADVERSARY,),
    ),
    SurfaceEntry(
        "setting.roles",
        "setting (pushdown)",
        "roles, turned off or on",
        T.GOVERNED,
        "with `roles = false` the roles with the prefix left by an earlier configuration are dropped",
        _t("review", "test_roles_toggled_off_drops_the_prefixed_roles")
        + _t("pure", "test_roles_false_drops_the_managed_roles_an_earlier_configuration_left")
        + (ADVERSARY,),
    ),
    SurfaceEntry(
        "setting.mapping",
        "setting (pushdown)",
        "pushdown_map_principal, answering differently",
        T.GOVERNED,
        "identity is whole-model: a name no model user maps to any more loses pushdown's grants and "
        "memberships (a scoped sync too: a changed name puts every managed role in play, with every "
        "holder); a name several users map to gets nothing",
        _t("review", "test_mapping_changed_between_syncs_leaves_no_old_name_with_grants")
        + _t("review", "test_a_scoped_sync_after_a_mapping_change_takes_the_old_names_roles")
        + _t("kept_roles", "test_a_new_backends_first_scoped_sync_keeps_every_roles_members")
        + _t("fail_open", "test_x1_scoped_sync_withholds_a_principal_two_users_map_to")
        + (ADVERSARY,),
    ),
    SurfaceEntry(
        "setting.createtable_grants",
        "setting (HiveServer2)",
        "hive.security.authorization.createtable.{owner,user,group,role}.grants",
        T.REPORTED,
        "the grants HiveServer2 adds to each new table are stored grants by another hand: findings "
        "where they reach a principal",
        _t("sync", "test_owner_grants_by_other_hands_are_findings_and_stay"),
    ),
    SurfaceEntry(
        "setting.admin_users",
        "setting (HiveServer2)",
        "hive.users.in.admin.role",
        T.REPORTED,
        "those users hold role `admin` on the metastore: a model user among them is a finding",
        _t("review", "test_admin_role_granted_to_a_managed_user_is_reported"),
    ),
    SurfaceEntry(
        "setting.group_mapping",
        "setting (Hadoop)",
        "hadoop.security.group.mapping (the enforcing host's groups)",
        T.NARROWED,
        "pushdown cannot read it, so it never grants to a group and no DENY depends on it: model groups "
        "are expanded to their members, and a member who leaves loses what the group gave",
        _t("fail_open", "test_h1_directory_member_leaving_a_group_under_a_realm_mapping_loses_access")
        + _t("review", "test_group_removed_while_a_role_is_held_through_it_loses_the_role"),
    ),
)

#: the whole surface, in the order docs/hive.md shows it
ENTRIES: tuple[SurfaceEntry, ...] = OBJECTS + PRINCIPALS + MODIFIERS + OWNERS + PRIVILEGES + SETTINGS

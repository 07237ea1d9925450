"""A Ranger Admin stand-in: Ranger's public v2 REST API over an in-memory store, and its policy engine.

Ranger Admin cannot run here, so the tests start this instead::

    from pushdown_lab.ranger_standin import Standin

    with Standin() as ranger:                      # 127.0.0.1, a free port
        ranger.create_service("hivedev", "hive")   # hdfs, hive, kafka service defs are loaded
        client = RangerClient(ranger.url, ranger.auth)   # ("admin", "rangerR0cks!")
        ...
        ranger.is_access_allowed("hivedev", {"database": "db1", "table": "t1"}, "select",
                                 user="alice", groups=["analysts"])       # -> bool

REST surface (paths under ``/service/public/v2/api`` unless absolute):
service definitions (``servicedef``, ``servicedef/name/{name}``, ``servicedef/{id}``);
services (create, get/update/delete by id and by ``name/{name}``, list);
policies (``policy`` create / search with ``serviceName``, ``policyName``,
``resource:<name>`` (an exact value here; Ranger matches wildcards), ``startIndex`` /
``pageSize`` (default 200), delete by ``servicename`` + ``policyname``;
``policy/{id}`` get/update/delete; ``service/{svc}/policy`` list, ``service/{svc}/policy/{name}``
get/update; ``policy/apply``); roles (``roles`` create (``?serviceName=``) / list,
``roles/{id}``, ``roles/name/{name}``, ``roles/names``, ``roles/user/{user}``,
``roles/grant/{svc}`` and ``roles/revoke/{svc}`` (also under ``/service/roles/roles/``));
``/service/roles/roles`` (a paged ``RangerRoleList``), ``/service/plugins/policies`` (a paged
``RangerPolicyList``), ``/service/plugins/policies/download/{svc}?lastKnownVersion=`` and
``/service/roles/download/{svc}?lastKnownRoleVersion=`` (304 when nothing changed).

Refusals as Ranger words them (HTTP 400 with ``{"statusCode": 1, "msgDesc": ...}``): a policy
name already used in the service (3006), a second policy on the same resources (3010, Ranger's
resource signature), an unknown service (3007), resources outside the service definition's
hierarchies (3011/3012/3024/3025), bad resource values (3018/3026/3056), an unknown access type
(3022), every other refusal of Ranger 2.9's RangerPolicyValidator (``validators.py``,
``itemchecks.py``: items with an access not allowed, no access, nobody or a null name; priority,
service type, update, zone, isDenyAllElse and validity-schedule rules), a role
name in use (4005), deleting or renaming a role a policy or another role still uses, a policy
naming a role that does not exist ("Operation denied. Role name: r specified in policy does not
exist in ranger admin."; ``?createPrincipalsIfAbsent=true`` creates it), a role naming a
member role that does not exist (``?createNonExistUserGroup=true``), an update whose body id
differs from its path ("policyID mismatch"), malformed JSON. Unknown users and groups are
refused too with ``Standin(strict_principals=True)`` (``standin.add_principals(users, groups)``
plays usersync). Unknown ids and names answer 404, except roles (400, "Data Not Found for
given Id" / "Role with name: r does not exist.", as Ranger's RoleREST); a missing or wrong
password 401.

Faults (``ranger.faults``): ``fail_next(n, status=503)``, ``delay_next(n, seconds)``,
``die_after_writes(n)`` (the server stops after ``n`` more writes; ``ranger.restart()`` brings
it back on the same port with the same state). ``ranger.request_log`` lists every request.

Evaluation: ``Standin.evaluate(service, resource, access_type, user, groups=(), owner=None)``
returns an :class:`~pushdown_lab.ranger_standin.policy_evaluation.AccessResult` (allowed,
determined, audited, policy id) from the service's CURRENT policies and roles, with Ranger's
semantics (see ``policy_evaluation.py``); ``Standin.is_access_allowed(...)`` is its
``allowed`` as a bool (not determined counts as denied). A resource value may be a string or a
list of strings. ``Standin.service_policies(service)`` is the
:class:`~pushdown_lab.ranger_standin.policy_evaluation.ServicePolicies` itself (made again only
when the service's policy or role version changes: moved by the policies and roles changed
since, as a plugin applies policy deltas (``deltas.py``), or built afresh after a service
definition, service or security zone change).

Ranger's own test vectors run against the same engine (``vectors.py``; the tests in the lab's
``tests/test_ranger_standin_vectors.py``, more files through ``PUSHDOWN_RANGER_VECTORS``).
"""

from __future__ import annotations

from pushdown_lab.ranger_standin.admin import ADMIN_PASSWORD, ADMIN_USER, Standin
from pushdown_lab.ranger_standin.errors import RangerError

__all__ = ["ADMIN_PASSWORD", "ADMIN_USER", "RangerError", "Standin"]

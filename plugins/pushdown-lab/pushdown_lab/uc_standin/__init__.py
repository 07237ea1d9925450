"""A Unity Catalog stand-in: the open server's REST paths pushdown and its proofs use, over
an in-memory store, deciding each call with the authorization expressions the open
server's services carry (``TableService``, ``SchemaService``, ``CatalogService``,
``PermissionService`` of unitycatalog/unitycatalog 0.4, read, not copied).

The real server (``io.unitycatalog:unitycatalog-server``) is not served by the Maven
registry these machines reach (:mod:`pushdown_lab.unitycatalog` tries, and says so), so
the tests start this instead::

    from pushdown_lab.uc_standin import Standin

    with Standin() as uc:                 # 127.0.0.1, a free port; admin owns the metastore
        token = uc.add_user("alice@x")    # SCIM POST /api/1.0/unity-control/scim2/Users
        uc.url, uc.admin_token

Semantics held: privileges inherit downward (catalog > schema > table); ``OWNER`` is the
creator's and is not inherited; the metastore admin passes every check; the permissions
API shows every principal's grants to an owner of the securable, its parent or
grandparent (or the admin) and only the caller's own to anybody else; a ``PATCH`` is
allowed as ``PermissionService`` allows it (the admin; a catalog's owner below it; a
schema's owner with USE CATALOG; an object's owner with both USE gates; a registered
model, external location or credential only to its own owner); an unknown principal is 404, an unknown
privilege 400; names are kept in lower case and may not hold ``.``, ``/``, spaces or
control characters (400). Every list call answers a page at a time as the open server's
``PagedListingHelper`` does (``page_size``, 100 by default; the next token is the last
name; the authorization filter thins the page afterwards, so a page may come back short
or empty with more to come), and names each object's ``owner``; ``GET /catalogs/{name}``
answers a catalog with its owner.
"""

from pushdown_lab.uc_standin.server import Standin

__all__ = ["Standin"]

"""The page in a real headless Chromium (Debian's, through Selenium): on the demo estate
and on a random one, each view shows what the evaluator decides (and what the backend
reads back), a caller cannot reach by URL what they may not see, the browser logs no
error, and the keyboard reaches the search. One browser for the whole module."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from pushdown.app.page.views import OPS_BY_TYPE
from pushdown.decide.evaluator import Evaluator
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile

from .browser import available, chromium, sign_in
from .site import Site, demo_core, random_core, serve

pytestmark = pytest.mark.skipif(available() is not None, reason=available() or "")


@pytest.fixture(scope="module")
def driver() -> Iterator[WebDriver]:
    d = chromium()
    try:
        yield d
    finally:
        d.quit()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    ac = demo_core(tmp_path_factory.mktemp("demo"))
    try:
        with serve(ac) as site:
            yield site
    finally:
        ac.close()


@pytest.fixture(scope="module")
def rand(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    ac = random_core(tmp_path_factory.mktemp("rand"), seed=7)
    try:
        with serve(ac) as site:
            yield site
    finally:
        ac.close()


def errors(driver: WebDriver, refused: bool = False) -> list[str]:
    """The browser's errors (with ``refused``: but the 404s this test asked for, which
    Chromium logs as failed loads)."""
    out = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    return [m for m in out if not (refused and "status of 404" in m)]


def open_object(driver: WebDriver, site: Site, ref: ObjectRef) -> dict[tuple[str, str], bool]:
    driver.get(f"{site.uri}/ui/object?name={quote(str(ref))}")
    if driver.find_elements(By.ID, "enforcement-box"):  # the read back arrives on its own
        WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.ID, "enforcement"))
    cells = driver.find_elements(By.CSS_SELECTOR, "#who td[data-op]")
    out = {}
    for td in cells:
        user = td.find_element(By.XPATH, "..").get_attribute("data-user")
        out[(user, td.get_attribute("data-op"))] = td.get_attribute("data-allowed") == "1"
    return out


def expected_object(site: Site, ref: ObjectRef, seen: set[str]) -> dict[tuple[str, str], bool]:
    ev = Evaluator(site.ac.decision_model())
    return {
        (u, op): True
        for u in seen
        for op in OPS_BY_TYPE[ref.type]
        if ev.authorize(u, op, ref, explain=False).allowed
    }


def test_object_view_equals_the_evaluator_and_the_backends_read_back(driver: WebDriver, demo: Site) -> None:
    sign_in(driver, demo.uri, "admin")
    model = demo.ac.decision_model()
    backend = demo.ac.backends["demo"]
    for ref in sorted(model.objects, key=lambda o: o.names):
        shown = open_object(driver, demo, ref)
        allowed = {k for k, v in shown.items() if v}
        assert allowed == set(expected_object(demo, ref, set(model.users))), ref
        plan, _ = reconcile(backend, model, Scope.of(objects=[ref]), dry_run=True)
        drift = [str(op) for op in plan.ops if ref.name in str(op)]
        state = driver.find_element(By.CSS_SELECTOR, "#enforcement tr[data-backend=demo] .state").text
        assert state == ("drift" if drift else "in sync"), ref
        for line in drift:
            assert line in driver.find_element(By.ID, "enforcement").text
    # the demo leaves one grant unpushed: the read back shows it on that table only
    open_object(driver, demo, ObjectRef.parse("table sales.crm.customers"))
    assert "bob: alter_table" in driver.find_element(By.ID, "enforcement").text
    # a DENY that wins is shown as such
    open_object(driver, demo, ObjectRef.parse("table sales.crm.salaries"))
    row = driver.find_element(By.CSS_SELECTOR, "#who tr[data-user=alice]")
    assert "DENY SELECT_TABLE on table sales.crm.salaries (role no_salaries) wins" in row.text
    assert errors(driver) == []


def test_principal_view_equals_the_evaluator(driver: WebDriver, demo: Site) -> None:
    sign_in(driver, demo.uri, "admin")
    model = demo.ac.decision_model()
    ev = Evaluator(model)
    for user in sorted(model.users):
        driver.get(f"{demo.uri}/ui/principal?name={quote(user)}")
        rows = driver.find_elements(By.CSS_SELECTOR, "table.may tr[data-object]")
        shown = {(r.get_attribute("data-object"), r.get_attribute("data-op")) for r in rows}
        expected = {
            (str(o), op)
            for o in model.objects
            for op in OPS_BY_TYPE.get(o.type, ())
            if ev.authorize(user, op, o, explain=False).allowed
        }
        assert shown == expected, user
        roles = {
            li.get_attribute("data-role")
            for li in driver.find_elements(By.CSS_SELECTOR, "#roles li[data-role]")
        }
        assert roles == set(model.roles_of(user)), user
    driver.get(f"{demo.uri}/ui/principal?name=bob")
    assert "granted role late to user bob" in driver.find_element(By.ID, "changes").text
    assert errors(driver) == []


def test_matrix_cells_equal_the_evaluator_with_the_reason_on_hover(driver: WebDriver, demo: Site) -> None:
    sign_in(driver, demo.uri, "admin")
    users, objects = (
        "alice,bob,carol,dave",
        "table sales.crm.orders,table sales.crm.salaries,schema sales.crm",
    )
    driver.get(f"{demo.uri}/ui/matrix?users={quote(users)}&objects={quote(objects)}")
    ev = Evaluator(demo.ac.decision_model())
    cells = driver.find_elements(By.CSS_SELECTOR, "#matrix td[data-op]")
    assert len(cells) == 4 * (
        2 * len(OPS_BY_TYPE[SecurableType.TABLE]) + len(OPS_BY_TYPE[SecurableType.SCHEMA])
    )
    for td in cells:
        u, o, op = (td.get_attribute(a) for a in ("data-user", "data-object", "data-op"))
        assert (td.get_attribute("data-allowed") == "1") == ev.authorize(u, op, o.split(" ", 1)[1]).allowed
        assert td.get_attribute("title")
    assert float(driver.find_element(By.ID, "checks-ms").text) >= 0
    assert errors(driver) == []


def test_explain_is_a_tree_of_the_decisions_trace(driver: WebDriver, demo: Site) -> None:
    sign_in(driver, demo.uri, "admin")
    driver.get(f"{demo.uri}/ui/explain?user=alice&op=load_table&target=sales.crm.salaries")
    decision = demo.ac.authorize("alice", "load_table", "sales.crm.salaries")
    assert driver.find_element(By.ID, "verdict").text.endswith("DENIED")
    assert driver.find_element(By.ID, "explain-text").get_attribute("textContent") == decision.explain()
    top = driver.find_elements(By.CSS_SELECTOR, "#trace > ul.tree > li")
    assert len(top) == len([s for s in decision.trace if s.depth == 0])
    nested = driver.find_elements(By.CSS_SELECTOR, "#trace details details")
    assert nested  # each step under the one above it
    summary = driver.find_element(By.CSS_SELECTOR, "#trace details > summary")
    summary.click()  # a branch folds
    assert driver.find_element(By.CSS_SELECTOR, "#trace details").get_attribute("open") is None
    assert errors(driver) == []


def test_audit_and_backends_in_plan_words(driver: WebDriver, demo: Site) -> None:
    sign_in(driver, demo.uri, "admin")
    driver.get(f"{demo.uri}/ui/audit?principal=bob")
    shown = [
        int(r.get_attribute("data-seq"))
        for r in driver.find_elements(By.CSS_SELECTOR, "#journal tr[data-seq]")
    ]
    assert shown == [e.seq for e in demo.ac.store.history(mentions=["user bob"])][: len(shown)]
    driver.find_element(By.CSS_SELECTOR, "#journal a[href*='principal?name=bob']").click()
    assert driver.find_element(By.ID, "principal-name").text == "bob"
    driver.get(f"{demo.uri}/ui/backends?plan=1")
    (result,) = demo.ac.sync(full=False, dry_run=True)
    assert result.plan is not None
    assert (
        driver.find_element(By.CSS_SELECTOR, "tr[data-backend=demo] pre.plan").text
        == result.plan.render().strip()
    )
    assert errors(driver) == []


def test_a_non_owner_cannot_reach_by_url_what_they_may_not_see(driver: WebDriver, demo: Site) -> None:
    sign_in(driver, demo.uri, "dave")
    driver.get(f"{demo.uri}/ui/object?name={quote('table sales.crm.nosuch')}")
    missing = driver.find_element(By.TAG_NAME, "main").text
    for url in (
        "/ui/object?name=" + quote("table sales.crm.salaries"),  # exists, dave may not load it
        "/ui/principal?name=alice",  # another user
        "/ui/explain?user=alice&op=load_table&target=sales.crm.orders",
        "/ui/audit?object=" + quote("table sales.crm.salaries"),
        "/ui/principal?name=nosuch",
    ):
        driver.get(demo.uri + url)
        assert driver.find_element(By.TAG_NAME, "main").text == missing, url
    # what dave may see shows only dave
    shown = open_object(driver, demo, ObjectRef.parse("table sales.crm.orders"))
    assert {u for u, _ in shown} == {"dave"}
    driver.get(f"{demo.uri}/ui/backends")
    assert not driver.find_elements(By.ID, "backends")
    assert errors(driver, refused=True) == []


def test_keyboard_tab_to_search_type_and_enter(driver: WebDriver, demo: Site) -> None:
    sign_in(driver, demo.uri, "carol")
    driver.get(f"{demo.uri}/ui/")
    body = driver.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    for _ in range(12):  # the links of the navigation, then the search field
        if driver.switch_to.active_element.get_attribute("id") == "search":
            break
        driver.switch_to.active_element.send_keys(Keys.TAB)
    search = driver.switch_to.active_element
    assert search.get_attribute("id") == "search"
    search.send_keys("salar")
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#results li"))
    search.send_keys(Keys.ENTER)
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, "object-name"))
    assert driver.find_element(By.ID, "object-name").text == "table sales.crm.salaries"
    assert errors(driver) == []


def test_random_estate_object_views_equal_the_evaluator_and_hide_the_rest(
    driver: WebDriver, rand: Site
) -> None:
    model = rand.ac.decision_model()
    sign_in(driver, rand.uri, "admin")
    for ref in sorted(model.objects, key=lambda o: o.names)[:14]:
        shown = open_object(driver, rand, ref)
        assert {k for k, v in shown.items() if v} == set(expected_object(rand, ref, set(model.users))), ref
        assert driver.find_element(By.CSS_SELECTOR, "#enforcement .state").text == "not enforced"
    ev = Evaluator(model)
    for user in sorted(model.users)[:8]:  # the principal view, as the owner sees it
        driver.get(f"{rand.uri}/ui/principal?name={quote(user)}")
        rows = driver.find_elements(By.CSS_SELECTOR, "table.may tr[data-object]")
        shown_pairs = {(r.get_attribute("data-object"), r.get_attribute("data-op")) for r in rows}
        assert shown_pairs == {
            (str(o), op)
            for o in model.objects
            for op in OPS_BY_TYPE.get(o.type, ())
            if ev.authorize(user, op, o, explain=False).allowed
        }, user
    user = "u3"
    sign_in(driver, rand.uri, user)
    driver.get(f"{rand.uri}/ui/object?name={quote('table c1.s1.nosuch')}")
    missing = driver.find_element(By.TAG_NAME, "main").text
    for ref in sorted(model.objects, key=lambda o: o.names):
        loads = ev.authorize(user, f"load_{ref.type.value}", ref, explain=False).allowed
        shown = open_object(driver, rand, ref)
        if loads:
            assert {k for k, v in shown.items() if v} == set(expected_object(rand, ref, {user})), ref
        else:
            assert driver.find_element(By.TAG_NAME, "main").text == missing, ref
    assert errors(driver, refused=True) == []


def test_unauthenticated_is_sent_to_sign_in_and_back(driver: WebDriver, demo: Site) -> None:
    driver.delete_all_cookies()
    driver.get(f"{demo.uri}/ui/object?name={quote('table sales.crm.orders')}")
    assert driver.current_url.startswith(f"{demo.uri}/ui/login")
    assert driver.find_elements(By.ID, "user")  # simple authentication: a user name
    driver.find_element(By.ID, "user").send_keys("dave")
    driver.find_element(By.CSS_SELECTOR, "form.login button").click()
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, "object-name"))
    assert driver.find_element(By.ID, "object-name").text == "table sales.crm.orders"  # back where asked

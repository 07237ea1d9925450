// Ranger's own policy engine as a judge: a long-lived process reading JSON lines on stdin
// and answering one JSON line per command on stdout (pushdown_lab.ranger_judge drives it).
//
//   {"op": "load", "engine": "e1", "serviceType": "hive", "servicePolicies": {...},
//    "roles": {...}, "base": "e0", "config": {"ranger.plugin.hive.super.users": "..."}}
//       -> {"ok": true}         builds RangerPolicyEngineImpl (or, with "base", applies the
//                                policy deltas of "servicePolicies" to engine "base")
//   {"op": "decide", "engine": "e1", "requests": [{...}, ...]}
//       -> {"ok": true, "answers": [{"allowed": .., "determined": .., "audited": ..,
//                                   "auditDetermined": .., "policyId": .., "reason": ..}]}
//       a request with "policyType" 1 (data masking) also answers maskType, maskCondition,
//       maskedValue; 2 (row filtering) filterExpr; one with "resourceAccessInfo": true answers
//       the allowed and denied users and groups of its resource instead
//   {"op": "drop", "engine": "e1"} -> {"ok": true}
//   {"op": "validate", ...} -> {"ok": true, "valid": .., "message": ..}: Ranger's own
//       RangerPolicyValidator on one policy (PolicyValidation.java)
//   anything that fails        -> {"ok": false, "error": "..."}
//
// "servicePolicies" and "roles" have the JSON shape Ranger Admin's download endpoints
// return (/service/plugins/policies/download/{svc}, /service/roles/download/{svc}). A
// request has the shape of RangerAccessRequestImpl (as Ranger's policy-engine test vectors
// write it), plus "userAttributes" / "groupAttributes" for a user store.
import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonDeserializer;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.reflect.TypeToken;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.StringWriter;
import java.io.PrintWriter;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.text.ParseException;
import java.text.SimpleDateFormat;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.TreeSet;
import java.util.Date;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.ranger.authorization.hadoop.config.RangerPluginConfig;
import org.apache.ranger.plugin.contextenricher.RangerTagForEval;
import org.apache.ranger.plugin.model.RangerPolicy;
import org.apache.ranger.plugin.model.RangerServiceDef;
import org.apache.ranger.plugin.policyengine.RangerAccessRequest;
import org.apache.ranger.plugin.policyengine.RangerAccessRequestImpl;
import org.apache.ranger.plugin.policyengine.RangerAccessResource;
import org.apache.ranger.plugin.policyengine.RangerAccessResourceImpl;
import org.apache.ranger.plugin.policyengine.RangerAccessResult;
import org.apache.ranger.plugin.policyengine.RangerPluginContext;
import org.apache.ranger.plugin.policyengine.RangerPolicyEngine;
import org.apache.ranger.plugin.policyengine.RangerPolicyEngineImpl;
import org.apache.ranger.plugin.policyengine.RangerResourceAccessInfo;
import org.apache.ranger.plugin.service.RangerBasePlugin;
import org.apache.ranger.plugin.util.RangerAccessRequestUtil;
import org.apache.ranger.plugin.util.RangerRequestedResources;
import org.apache.ranger.plugin.util.RangerRoles;
import org.apache.ranger.plugin.util.RangerUserStore;
import org.apache.ranger.plugin.util.ServicePolicies;

public final class RangerJudge {
    private static final String[] DATE_FORMATS = {"yyyyMMdd-HH:mm:ss.SSSZ", "yyyy-MM-dd'T'HH:mm:ss.SSSX", "yyyy-MM-dd'T'HH:mm:ssX"};

    private final Map<String, RangerPolicyEngine> engines = new HashMap<>();
    private final Map<String, RangerServiceDef> serviceDefs = new HashMap<>();
    private final Gson gson = new GsonBuilder()
            .registerTypeAdapter(Date.class, (JsonDeserializer<Date>) (json, type, ctx) -> date(json))
            .registerTypeAdapter(RangerAccessResource.class, (JsonDeserializer<RangerAccessResource>) (json, type, ctx) -> resource(json.getAsJsonObject()))
            .create();

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, "UTF-8");
        System.setOut(System.err); // whatever the engine prints stays off the protocol
        // log4j unconfigured logs at DEBUG to nowhere, building every debug message first
        org.apache.log4j.Logger root = org.apache.log4j.Logger.getRootLogger();
        root.removeAllAppenders();
        root.addAppender(new org.apache.log4j.ConsoleAppender(new org.apache.log4j.PatternLayout("%p %c{1}: %m%n"), "System.err"));
        root.setLevel(org.apache.log4j.Level.WARN);
        new RangerJudge().serve(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)), out);
    }

    private void serve(BufferedReader in, PrintStream out) throws Exception {
        out.println("{\"ok\": true, \"ready\": \"ranger-judge\"}");
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.isBlank()) {
                continue;
            }
            String reply;
            try {
                reply = gson.toJson(handle(JsonParser.parseString(line).getAsJsonObject()));
            } catch (Exception | LinkageError e) {
                Map<String, Object> failed = new LinkedHashMap<>();
                failed.put("ok", false);
                failed.put("error", describe(e));
                reply = gson.toJson(failed);
            }
            out.println(reply);
        }
    }

    private Map<String, Object> handle(JsonObject command) {
        String op = command.get("op").getAsString();
        String name = command.has("engine") ? command.get("engine").getAsString() : "default";
        Map<String, Object> reply = new LinkedHashMap<>();
        reply.put("ok", true);
        switch (op) {
            case "load":
                load(name, command);
                break;
            case "decide":
                reply.put("answers", decide(name, command));
                break;
            case "validate":
                reply.putAll(PolicyValidation.validate(gson, command));
                break;
            case "drop":
                engines.remove(name);
                serviceDefs.remove(name);
                break;
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
        return reply;
    }

    private void load(String name, JsonObject command) {
        ServicePolicies policies = gson.fromJson(command.get("servicePolicies"), ServicePolicies.class);
        if (command.has("base")) {
            String base = command.get("base").getAsString();
            RangerPolicyEngine previous = engine(base);
            RangerPolicyEngine updated = RangerPolicyEngineImpl.getPolicyEngine((RangerPolicyEngineImpl) previous, policies);
            if (updated == null) {
                throw new IllegalStateException("the policy deltas could not be applied to engine " + base);
            }
            engines.put(name, updated);
            serviceDefs.put(name, serviceDefs.get(base));
            return;
        }
        RangerRoles roles = command.has("roles") && !command.get("roles").isJsonNull()
                ? gson.fromJson(command.get("roles"), RangerRoles.class) : new RangerRoles();
        String serviceType = command.has("serviceType") ? command.get("serviceType").getAsString() : policies.getServiceDef().getName();
        RangerPluginConfig config = new RangerPluginConfig(serviceType, policies.getServiceName(), serviceType, "cl1", "on-prem", null);
        if (command.has("config")) {
            for (Map.Entry<String, JsonElement> entry : command.getAsJsonObject("config").entrySet()) {
                config.set(entry.getKey(), entry.getValue().getAsString());
            }
        }
        new RangerBasePlugin(config); // reads super users and audit exclusions into the config
        RangerPolicyEngineImpl engine = new RangerPolicyEngineImpl(policies, new RangerPluginContext(config), roles);
        engine.setUseForwardedIPAddress(config.getBoolean(config.getPropertyPrefix() + ".use.x-forwarded-for.ipaddress", false));
        String proxies = config.get(config.getPropertyPrefix() + ".trusted.proxy.ipaddresses");
        if (proxies != null) {
            String[] addresses = proxies.split(";");
            for (int i = 0; i < addresses.length; i++) {
                addresses[i] = addresses[i].trim();
            }
            engine.setTrustedProxyAddresses(addresses);
        }
        engines.put(name, engine);
        serviceDefs.put(name, policies.getServiceDef());
    }

    private RangerPolicyEngine engine(String name) {
        RangerPolicyEngine engine = engines.get(name);
        if (engine == null) {
            throw new IllegalArgumentException("no engine named " + name + " is loaded");
        }
        return engine;
    }

    private List<Map<String, Object>> decide(String name, JsonObject command) {
        RangerPolicyEngine engine = engine(name);
        List<Map<String, Object>> answers = new ArrayList<>();
        for (JsonElement raw : command.getAsJsonArray("requests")) {
            JsonObject fields = raw.getAsJsonObject();
            RangerAccessRequest request = request(fields, serviceDefs.get(name));
            Map<String, Object> answer = new LinkedHashMap<>();
            if (fields.has("resourceAccessInfo")) {
                RangerResourceAccessInfo info = engine.getResourceAccessInfo(request);
                answer.put("allowedUsers", info.getAllowedUsers());
                answer.put("allowedGroups", info.getAllowedGroups());
                answer.put("deniedUsers", info.getDeniedUsers());
                answer.put("deniedGroups", info.getDeniedGroups());
                answers.add(answer);
                continue;
            }
            int policyType = fields.has("policyType") ? fields.get("policyType").getAsInt() : RangerPolicy.POLICY_TYPE_ACCESS;
            RangerAccessResult result = engine.evaluatePolicies(request, policyType, null);
            engine.evaluateAuditPolicies(result);
            answer.put("allowed", result.getIsAllowed());
            answer.put("determined", result.getIsAccessDetermined());
            answer.put("audited", result.getIsAudited());
            answer.put("auditDetermined", result.getIsAuditedDetermined());
            answer.put("policyId", result.getPolicyId());
            answer.put("reason", result.getReason());
            if (policyType == RangerPolicy.POLICY_TYPE_DATAMASK) {
                answer.put("maskType", result.getMaskType());
                answer.put("maskCondition", result.getMaskCondition());
                answer.put("maskedValue", result.getMaskedValue());
            } else if (policyType == RangerPolicy.POLICY_TYPE_ROWFILTER) {
                answer.put("filterExpr", result.getFilterExpr());
            }
            answers.add(answer);
        }
        return answers;
    }

    private RangerAccessRequest request(JsonObject raw, RangerServiceDef serviceDef) {
        RangerAccessRequestImpl request = gson.fromJson(raw, RangerAccessRequestImpl.class);
        Map<String, Object> context = request.getContext();
        if (context == null) {
            context = new HashMap<>();
            request.setContext(context);
        }
        request.setAccessType(request.getAccessType()); // the setter derives "any" and delegated-admin access
        if (request.getAccessTime() == null) {
            request.setAccessTime(new Date());
        }
        Object accessTypes = context.get(RangerAccessRequestUtil.KEY_CONTEXT_ALL_ACCESSTYPES);
        if (accessTypes instanceof Collection) {
            context.put(RangerAccessRequestUtil.KEY_CONTEXT_ALL_ACCESSTYPES, new TreeSet<Object>((Collection<?>) accessTypes));
        }
        Object groups = context.get(RangerAccessRequestUtil.KEY_CONTEXT_ALL_ACCESSTYPE_GROUPS);
        if (groups instanceof Collection) {
            Set<Set<Object>> sets = new HashSet<>();
            for (Object group : (Collection<?>) groups) {
                sets.add(new TreeSet<Object>((Collection<?>) group));
            }
            context.put(RangerAccessRequestUtil.KEY_CONTEXT_ALL_ACCESSTYPE_GROUPS, sets);
        }
        boolean given = false;
        Object tags = context.remove(RangerAccessRequestUtil.KEY_CONTEXT_TAGS);
        if (tags instanceof String && !((String) tags).isEmpty()) {
            Type setType = new TypeToken<Set<RangerTagForEval>>() { }.getType();
            context.put(RangerAccessRequestUtil.KEY_CONTEXT_TAGS, gson.fromJson((String) tags, setType));
            given = true;
        } else if (tags != null) {
            given = true;
        }
        Object requested = context.remove(RangerAccessRequestUtil.KEY_CONTEXT_REQUESTED_RESOURCES);
        if (requested instanceof String && !((String) requested).isEmpty()) {
            context.put(RangerAccessRequestUtil.KEY_CONTEXT_REQUESTED_RESOURCES, gson.fromJson((String) requested, RangerRequestedResources.class));
            given = true;
        } else if (requested != null) {
            given = true;
        }
        if (given && request.getResource() instanceof RangerAccessResourceImpl) {
            // tags already in the request: the resource carries its service definition, so the
            // engine takes the request as pre-processed and runs no tag enricher over it
            ((RangerAccessResourceImpl) request.getResource()).setServiceDef(serviceDef);
        }
        if (raw.has("userAttributes") || raw.has("groupAttributes")) {
            Type attrs = new TypeToken<Map<String, Map<String, String>>>() { }.getType();
            RangerUserStore store = new RangerUserStore();
            store.setUserAttrMapping(raw.has("userAttributes") ? gson.fromJson(raw.get("userAttributes"), attrs) : null);
            store.setGroupAttrMapping(raw.has("groupAttributes") ? gson.fromJson(raw.get("groupAttributes"), attrs) : null);
            RangerAccessRequestUtil.setRequestUserStoreInContext(context, store);
        }
        return request;
    }

    private RangerAccessResource resource(JsonObject raw) {
        RangerAccessResourceImpl resource = new RangerAccessResourceImpl();
        JsonObject elements = raw.has("elements") ? raw.getAsJsonObject("elements") : new JsonObject();
        for (Map.Entry<String, JsonElement> element : elements.entrySet()) {
            JsonElement value = element.getValue();
            if (value.isJsonNull()) {
                continue;
            }
            if (value.isJsonArray()) {
                List<String> values = new ArrayList<>();
                value.getAsJsonArray().forEach(v -> values.add(v.getAsString()));
                resource.setValue(element.getKey(), values);
            } else {
                resource.setValue(element.getKey(), value.getAsString());
            }
        }
        if (raw.has("ownerUser") && !raw.get("ownerUser").isJsonNull()) {
            resource.setOwnerUser(raw.get("ownerUser").getAsString());
        }
        return resource;
    }

    private static Date date(JsonElement json) {
        if (json.getAsJsonPrimitive().isNumber()) {
            return new Date(json.getAsLong());
        }
        String text = json.getAsString();
        for (String format : DATE_FORMATS) {
            try {
                return new SimpleDateFormat(format).parse(text);
            } catch (ParseException e) {
                // try the next format
            }
        }
        throw new IllegalArgumentException("unreadable date " + text);
    }

    private static String describe(Throwable e) {
        StringWriter trace = new StringWriter();
        e.printStackTrace(new PrintWriter(trace));
        String text = trace.toString();
        return text.length() > 3000 ? text.substring(0, 3000) : text;
    }
}

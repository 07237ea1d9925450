// Ranger's own RangerPolicyValidator (Ranger 2.9) over an in-memory ServiceStore: the judge's
// "validate" command. The store holds one service, its service definition, the policies
// already stored and the security zones, as the command gives them; it answers the few
// look-ups the validator makes (services and definitions by name or id, a policy by id, a
// policy id by name and zone, the policies of a resource signature, a zone by name or id)
// and nothing else.
//
//   {"op": "validate", "serviceDef": {...}, "service": {"id": 1, "name": "hivedev", "type": "hive"},
//    "policies": [{...}, ...], "zones": [{...}, ...], "policy": {...}, "action": "create" | "update"}
//       -> {"ok": true, "valid": false, "message": "(0) Validation failure: error code[3023], ..."}
import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.ranger.plugin.model.RangerPolicy;
import org.apache.ranger.plugin.model.RangerPolicyResourceSignature;
import org.apache.ranger.plugin.model.RangerSecurityZone;
import org.apache.ranger.plugin.model.RangerService;
import org.apache.ranger.plugin.model.RangerServiceDef;
import org.apache.ranger.plugin.model.validation.RangerPolicyValidator;
import org.apache.ranger.plugin.model.validation.RangerValidator;
import org.apache.ranger.plugin.store.ServiceStore;

final class PolicyValidation {
    private PolicyValidation() {
    }

    static Map<String, Object> validate(Gson gson, JsonObject command) {
        RangerServiceDef serviceDef = gson.fromJson(command.get("serviceDef"), RangerServiceDef.class);
        RangerService service = gson.fromJson(command.get("service"), RangerService.class);
        List<RangerPolicy> policies = list(gson, command.get("policies"), RangerPolicy.class);
        List<RangerSecurityZone> zones = list(gson, command.get("zones"), RangerSecurityZone.class);
        RangerPolicy policy = gson.fromJson(command.get("policy"), RangerPolicy.class);
        boolean update = command.has("action") && "update".equals(command.get("action").getAsString());
        ServiceStore store = store(serviceDef, service, policies, zones);
        Map<String, Object> reply = new LinkedHashMap<>();
        reply.put("ok", true);
        try {
            new RangerPolicyValidator(store).validate(policy, update ? RangerValidator.Action.UPDATE : RangerValidator.Action.CREATE, true);
            reply.put("valid", true);
        } catch (Exception e) {
            reply.put("valid", false);
            reply.put("message", String.valueOf(e.getMessage()));
        }
        return reply;
    }

    private static <T> List<T> list(Gson gson, JsonElement json, Class<T> type) {
        List<T> out = new ArrayList<>();
        if (json != null && json.isJsonArray()) {
            for (JsonElement each : (JsonArray) json) {
                out.add(gson.fromJson(each, type));
            }
        }
        return out;
    }

    private static ServiceStore store(RangerServiceDef serviceDef, RangerService service,
            List<RangerPolicy> policies, List<RangerSecurityZone> zones) {
        return (ServiceStore) Proxy.newProxyInstance(ServiceStore.class.getClassLoader(), new Class<?>[] {ServiceStore.class},
                (proxy, method, args) -> {
                    Object first = args == null || args.length == 0 ? null : args[0];
                    switch (method.getName()) {
                        case "getServiceDefByName":
                            return Objects.equals(first, serviceDef.getName()) ? serviceDef : null;
                        case "getServiceDef":
                            return Objects.equals(first, serviceDef.getId()) ? serviceDef : null;
                        case "getServiceByName":
                            return Objects.equals(first, service.getName()) ? service : null;
                        case "getService":
                            return Objects.equals(first, service.getId()) ? service : null;
                        case "policyExists":
                            return policies.stream().anyMatch(p -> Objects.equals(p.getId(), first));
                        case "getPolicy":
                            return policies.stream().filter(p -> Objects.equals(p.getId(), first)).findFirst().orElse(null);
                        case "getPolicyId":
                            return policyId(policies, zones, (String) args[1], (Long) args[2]);
                        case "getPoliciesByResourceSignature":
                            return bySignature(policies, (String) args[1], (Boolean) args[2]);
                        case "getSecurityZone":
                            return zones.stream().filter(z -> Objects.equals(first, z.getName()) || Objects.equals(first, z.getId())).findFirst().orElse(null);
                        case "toString":
                            return "in-memory ServiceStore";
                        case "hashCode":
                            return System.identityHashCode(proxy);
                        case "equals":
                            return proxy == first;
                        default:
                            throw new UnsupportedOperationException("the in-memory store has no " + method.getName());
                    }
                });
    }

    private static Long policyId(List<RangerPolicy> policies, List<RangerSecurityZone> zones, String name, Long zoneId) {
        for (RangerPolicy p : policies) {
            String zone = p.getZoneName() == null ? "" : p.getZoneName();
            Long id = zone.isEmpty() ? Long.valueOf(RangerSecurityZone.RANGER_UNZONED_SECURITY_ZONE_ID)
                    : zones.stream().filter(z -> zone.equals(z.getName())).map(RangerSecurityZone::getId).findFirst().orElse(null);
            if (Objects.equals(p.getName(), name) && Objects.equals(id, zoneId)) {
                return p.getId();
            }
        }
        return null;
    }

    private static List<RangerPolicy> bySignature(List<RangerPolicy> policies, String signature, Boolean enabled) {
        List<RangerPolicy> out = new ArrayList<>();
        for (RangerPolicy p : policies) {
            if (Objects.equals(p.getIsEnabled(), enabled) && new RangerPolicyResourceSignature(p).getSignature().equals(signature)) {
                out.add(p);
            }
        }
        return out;
    }
}

// The condition evaluator that Ranger's policy-engine test vectors name
// (org.apache.ranger.plugin.conditionevaluator.RangerSimpleMatcher) lives only in Ranger's
// test sources, not in its jars. This is ours, written to what the vectors expect of it: the
// request context's value under the condition definition's CONTEXT_NAME option must match one
// of the condition's values (wildcards allowed); a condition with no values matches anything,
// a request without that context value matches nothing.
package org.apache.ranger.plugin.conditionevaluator;

import java.util.List;
import java.util.Map;
import org.apache.commons.io.FilenameUtils;
import org.apache.commons.io.IOCase;
import org.apache.ranger.plugin.policyengine.RangerAccessRequest;

public class RangerSimpleMatcher extends RangerAbstractConditionEvaluator {
    private String contextName;

    @Override
    public void init() {
        super.init();
        Map<String, String> options = conditionDef == null ? null : conditionDef.getEvaluatorOptions();
        contextName = options == null ? null : options.get("CONTEXT_NAME");
    }

    @Override
    public boolean isMatched(RangerAccessRequest request) {
        List<String> wanted = condition == null ? null : condition.getValues();
        if (wanted == null || wanted.isEmpty()) {
            return true;
        }
        Object value = contextName == null || request.getContext() == null ? null : request.getContext().get(contextName);
        if (value == null) {
            return false;
        }
        for (String pattern : wanted) {
            if (FilenameUtils.wildcardMatch(value.toString(), pattern, IOCase.INSENSITIVE)) {
                return true;
            }
        }
        return false;
    }
}

/*
 * SkipList: a JUnit 5 condition that disables the test methods named in
 * -Dskade.rest.skip=NAME[,NAME...] (a NAME is a method name, or Class#method), so that a run
 * against a server lacking a feature reports those tests as skipped, with the reason
 * "skipped by skade.rest.skip", instead of failing.  Empty or unset: nothing is skipped.
 * Parameterized tests are skipped as a whole.
 */
package skade.rest;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

public final class SkipList implements ExecutionCondition {
  private static Set<String> names() {
    String v = System.getProperty(RestTarget.PREFIX + "skip", "");
    return Arrays.stream(v.split(","))
        .map(String::trim)
        .filter(s -> !s.isEmpty())
        .collect(Collectors.toSet());
  }

  @Override
  public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
    if (context.getTestMethod().isEmpty()) {
      return ConditionEvaluationResult.enabled("a class");
    }
    Method m = context.getTestMethod().get();
    String cls = context.getRequiredTestClass().getSimpleName();
    Set<String> skip = names();
    if (skip.contains(m.getName()) || skip.contains(cls + "#" + m.getName())) {
      return ConditionEvaluationResult.disabled("skipped by skade.rest.skip");
    }
    return ConditionEvaluationResult.enabled("not in skade.rest.skip");
  }
}

{#
    How sure a rate is. See docs/metrics.md for the formulas and their approximations.

    wilson_low / wilson_high: the 95% Wilson score interval of a proportion
    p = successes / n (NULL when n = 0). `successes` may be fractional (analyzer
    partials weigh 0.5): the interval then treats the weighted count as if it
    were a count of Bernoulli successes, an approximation documented in docs/metrics.md.
#}
{% macro wilson_low(successes, n, z=1.96) -%}
    {{ _wilson_bound(successes, n, z, '-') }}
{%- endmacro %}

{% macro wilson_high(successes, n, z=1.96) -%}
    {{ _wilson_bound(successes, n, z, '+') }}
{%- endmacro %}

{% macro _wilson_bound(successes, n, z, sign) -%}
    case
        when ({{ n }}) > 0 then
            least(1.0, greatest(0.0,
                (
                    (({{ successes }}) * 1.0 / ({{ n }})) + {{ z * z }} / (2.0 * ({{ n }}))
                    {{ sign }} {{ z }} * sqrt(
                        (({{ successes }}) * 1.0 / ({{ n }})) * (1 - (({{ successes }}) * 1.0 / ({{ n }}))) / ({{ n }})
                        + {{ z * z }} / (4.0 * ({{ n }}) * ({{ n }}))
                    )
                ) / (1 + {{ z * z }} / ({{ n }}))
            ))
    end
{%- endmacro %}

{#
    Standard normal CDF, Phi(x), via the Abramowitz & Stegun 7.1.26 erf
    approximation (absolute error below 1.5e-7), written with exp() only so it
    runs on any adapter.
#}
{% macro normal_cdf(x) -%}
    (0.5 * (1 + sign({{ x }}) * (1 - (
        (((((1.061405429 * (1 / (1 + 0.3275911 * abs({{ x }}) / sqrt(2.0)))
        - 1.453152027) * (1 / (1 + 0.3275911 * abs({{ x }}) / sqrt(2.0)))
        + 1.421413741) * (1 / (1 + 0.3275911 * abs({{ x }}) / sqrt(2.0)))
        - 0.284496736) * (1 / (1 + 0.3275911 * abs({{ x }}) / sqrt(2.0)))
        + 0.254829592) * (1 / (1 + 0.3275911 * abs({{ x }}) / sqrt(2.0))))
        * exp(-({{ x }}) * ({{ x }}) / 2.0)
    ))))
{%- endmacro %}

{#
    Two-proportion z statistic with the pooled proportion:
    z = (p1 - p2) / sqrt(p (1 - p) (1/n1 + 1/n2)), p = (x1 + x2) / (n1 + n2).
    NULL when either sample is empty or the pooled variance is 0.
#}
{% macro two_proportion_z(x1, n1, x2, n2) -%}
    case
        when ({{ n1 }}) > 0 and ({{ n2 }}) > 0
            and (({{ x1 }}) + ({{ x2 }})) > 0
            and (({{ x1 }}) + ({{ x2 }})) < (({{ n1 }}) + ({{ n2 }}))
        then
            ((({{ x1 }}) * 1.0 / ({{ n1 }})) - (({{ x2 }}) * 1.0 / ({{ n2 }})))
            / sqrt(
                ((({{ x1 }}) + ({{ x2 }})) * 1.0 / (({{ n1 }}) + ({{ n2 }})))
                * (1 - ((({{ x1 }}) + ({{ x2 }})) * 1.0 / (({{ n1 }}) + ({{ n2 }}))))
                * (1.0 / ({{ n1 }}) + 1.0 / ({{ n2 }}))
            )
    end
{%- endmacro %}

{# Two-sided p-value of a z statistic: 2 (1 - Phi(|z|)). #}
{% macro two_sided_p_value(z) -%}
    (2 * (1 - {{ normal_cdf('abs(' ~ z ~ ')') }}))
{%- endmacro %}

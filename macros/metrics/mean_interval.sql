{#
    The 95% interval of a mean of values bounded to [0, 1] (eval accuracies),
    from the values' count, sum and sum of squares (so that tenants' rows can
    be summed first): mean -/+ z * s / sqrt(n), with s the sample standard
    deviation and z = normal_quantile_975() (a normal approximation; with few
    values a t quantile would be wider), clipped to [0, 1]. NULL when n < 2
    (one value says nothing of the spread). See docs/metrics.md (part 2),
    "Mean accuracy and its interval".
#}
{% macro bounded_mean_low(n, total, sum_of_squares) -%}
    {{ _bounded_mean_bound(n, total, sum_of_squares, '-') }}
{%- endmacro %}

{% macro bounded_mean_high(n, total, sum_of_squares) -%}
    {{ _bounded_mean_bound(n, total, sum_of_squares, '+') }}
{%- endmacro %}

{% macro _bounded_mean_bound(n, total, sum_of_squares, sign) -%}
    case
        when ({{ n }}) >= 2 then
            least(1.0e0, greatest(0.0e0,
                {{ ratio(total, n) }}
                {{ sign }} {{ normal_quantile_975() }}e0 * sqrt(
                    greatest(
                        0.0e0,
                        ({{ sum_of_squares }} - {{ ratio(total, n) }} * ({{ total }}))
                        / (({{ n }}) - 1.0e0)
                    ) / ({{ n }})
                )
            ))
    end
{%- endmacro %}

{#
    How sure a rate is. See docs/metrics.md ("Wilson score interval",
    "Two-proportion z-test (pooled)", "False discoveries") for the formulas, their
    accuracy and the tests that check them against statsmodels.

    wilson_low / wilson_high: the 95% Wilson score interval of a proportion
    p = successes / n (NULL when n = 0), with the exact normal quantile
    z = 1.959963984540054 (`normal_quantile_975()`), not 1.96. `successes` may
    be fractional (analyzer partials weigh 0.5): the interval then treats the
    weighted count as if it were a count of Bernoulli successes, an
    approximation documented in docs/metrics.md.
#}

{#- Phi^-1(0.975), the two-sided 95% quantile of the standard normal, to double precision. -#}
{% macro normal_quantile_975() -%}
    {{ return(1.959963984540054) }}
{%- endmacro %}

{#-
    `numerator / denominator` in double precision on every engine. The
    numerator is cast first: `x * 1.0` would be a DECIMAL on Spark, whose
    division keeps only 6 decimals (and a plain decimal literal such as
    `2.0` is a DECIMAL there too, so every constant in these formulas is
    written with an exponent, `2.0e0`: a DOUBLE on DuckDB and on Spark).
-#}
{% macro ratio(numerator, denominator) -%}
    cast(({{ numerator }}) as {{ dbt.type_float() }}) / ({{ denominator }})
{%- endmacro %}

{% macro wilson_low(successes, n, z=none) -%}
    {{ _wilson_bound(successes, n, normal_quantile_975() if z is none else z, '-') }}
{%- endmacro %}

{% macro wilson_high(successes, n, z=none) -%}
    {{ _wilson_bound(successes, n, normal_quantile_975() if z is none else z, '+') }}
{%- endmacro %}

{% macro _wilson_bound(successes, n, z, sign) -%}
    case
        when ({{ n }}) > 0 then
            least(1.0e0, greatest(0.0e0,
                (
                    {{ ratio(successes, n) }} + {{ z * z }}e0 / (2.0e0 * ({{ n }}))
                    {{ sign }} {{ z }}e0 * sqrt(
                        {{ ratio(successes, n) }} * (1 - {{ ratio(successes, n) }}) / ({{ n }})
                        + {{ z * z }}e0 / (4.0e0 * ({{ n }}) * ({{ n }}))
                    )
                ) / (1 + {{ z * z }}e0 / ({{ n }}))
            ))
    end
{%- endmacro %}

{#
    Upper tail of the standard normal at |x|: Q(|x|) = 1 - Phi(|x|), for any
    real x (so at most 0.5; Phi(x) is Q(|x|) for x < 0 and 1 - Q(|x|) else).

    Hart (1968) as given by West (2005), "Better approximations to cumulative
    normal functions", Wilmott Magazine, figure 2: for |x| < 7.07106781186547 a
    ratio of two polynomials times exp(-x^2/2), beyond it a continued fraction,
    0 beyond 37 (where Q < 1e-299). The tail is computed directly, with no
    1 - Phi cancellation, and with exp(), abs() and arithmetic only, so it runs
    on any adapter. Against scipy's norm.sf: absolute error below 2e-16,
    relative error below 1e-8 (docs/metrics.md).
#}
{% macro normal_upper_tail_of_abs(x) -%}
    {%- set abs_x = 'abs(' ~ x ~ ')' -%}
    {%- set numerator = [
        '0.0352624965998911e0', '0.700383064443688e0', '6.37396220353165e0', '33.912866078383e0',
        '112.079291497871e0', '221.213596169931e0', '220.206867912376e0',
    ] -%}
    {%- set denominator = [
        '0.0883883476483184e0', '1.75566716318264e0', '16.064177579207e0', '86.7807322029461e0',
        '296.564248779674e0', '637.333633378831e0', '793.826512519948e0', '440.413735824752e0',
    ] -%}
    case
        when {{ abs_x }} > 37 then 0.0e0
        when {{ abs_x }} < 7.07106781186547e0 then
            exp(-{{ abs_x }} * {{ abs_x }} / 2.0e0)
            * ({{ _horner(numerator, abs_x) }})
            / ({{ _horner(denominator, abs_x) }})
        else
            exp(-{{ abs_x }} * {{ abs_x }} / 2.0e0)
            / ({{ abs_x }} + 1.0e0 / ({{ abs_x }} + 2.0e0 / ({{ abs_x }} + 3.0e0 / ({{ abs_x }} + 4.0e0 / ({{ abs_x }} + 0.65e0)))))
            / 2.5066282746310002e0
    end
{%- endmacro %}

{#- The polynomial with `coefficients` (highest power first) at x, in Horner form. -#}
{% macro _horner(coefficients, x) -%}
    {%- set polynomial = namespace(sql=coefficients[0]) -%}
    {%- for coefficient in coefficients[1:] -%}
        {%- set polynomial.sql = '(' ~ polynomial.sql ~ ') * ' ~ x ~ ' + ' ~ coefficient -%}
    {%- endfor -%}
    {{ polynomial.sql }}
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
            ({{ ratio(x1, n1) }} - {{ ratio(x2, n2) }})
            / sqrt(
                {{ ratio('(' ~ x1 ~ ') + (' ~ x2 ~ ')', '(' ~ n1 ~ ') + (' ~ n2 ~ ')') }}
                * (1 - {{ ratio('(' ~ x1 ~ ') + (' ~ x2 ~ ')', '(' ~ n1 ~ ') + (' ~ n2 ~ ')') }})
                * ({{ ratio(1, n1) }} + {{ ratio(1, n2) }})
            )
    end
{%- endmacro %}

{#- Two-sided p-value of a z statistic: 2 Q(|z|), the upper tail taken directly; NULL when z is. -#}
{% macro two_sided_p_value(z) -%}
    (2 * {{ normal_upper_tail_of_abs(z) }})
{%- endmacro %}

{#
    One-sided p-value of a z statistic in the bad direction `direction` (a SQL
    expression giving 'up' or 'down'): the upper tail of z, Q(z), for 'up' (a
    rise is the alternative), the upper tail of -z, Q(-z), for 'down'. Built
    from Q(|z|): the tail on the side z lies on is Q(|z|), the other side
    1 - Q(|z|). NULL when z or the direction is. statsmodels'
    proportions_ztest(alternative='larger' / 'smaller') computes the same
    (tests/dbt/test_alert_statistics_oracle.py).
#}
{% macro one_sided_p_value(z, direction) -%}
    case
        when ({{ z }}) is null or ({{ direction }}) is null then null
        when (({{ direction }}) = 'up' and ({{ z }}) >= 0) or (({{ direction }}) = 'down' and ({{ z }}) <= 0)
            then {{ normal_upper_tail_of_abs(z) }}
        when ({{ direction }}) in ('up', 'down')
            then 1.0e0 - {{ normal_upper_tail_of_abs(z) }}
    end
{%- endmacro %}

{#
    Newcombe's hybrid score interval for a difference of two proportions
    p1 - p2 (method 10 of Newcombe 1998), from each rate and its 95% Wilson
    bounds (l1, u1) and (l2, u2):
        low  = (p1 - p2) - sqrt((p1 - l1)^2 + (u2 - p2)^2), at least -1
        high = (p1 - p2) + sqrt((u1 - p1)^2 + (p2 - l2)^2), at most 1
    NULL when either rate is (an empty sample). statsmodels'
    confint_proportions_2indep(method='newcomb') computes the same interval
    (tests/dbt/test_statistics_oracle.py). The arguments are SQL expressions,
    ideally of unrounded rates and bounds.
#}
{% macro newcombe_difference_low(p1, low1, high1, p2, low2, high2) -%}
    case
        when ({{ p1 }}) is not null and ({{ p2 }}) is not null then
            greatest(-1.0e0,
                (({{ p1 }}) - ({{ p2 }}))
                - sqrt(
                    (({{ p1 }}) - ({{ low1 }})) * (({{ p1 }}) - ({{ low1 }}))
                    + (({{ high2 }}) - ({{ p2 }})) * (({{ high2 }}) - ({{ p2 }}))
                )
            )
    end
{%- endmacro %}

{% macro newcombe_difference_high(p1, low1, high1, p2, low2, high2) -%}
    case
        when ({{ p1 }}) is not null and ({{ p2 }}) is not null then
            least(1.0e0,
                (({{ p1 }}) - ({{ p2 }}))
                + sqrt(
                    (({{ high1 }}) - ({{ p1 }})) * (({{ high1 }}) - ({{ p1 }}))
                    + (({{ p2 }}) - ({{ low2 }})) * (({{ p2 }}) - ({{ low2 }}))
                )
            )
    end
{%- endmacro %}

{#-
    True when a 95% interval (low, high) excludes 0: the change is
    significant. False, never NULL, when there is no interval.
-#}
{% macro interval_excludes_zero(low, high) -%}
    coalesce(({{ low }}) > 0 or ({{ high }}) < 0, false)
{%- endmacro %}

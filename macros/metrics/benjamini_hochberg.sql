{#-
    Benjamini-Hochberg q-values over one family of tests, as two CTEs
    (`ranked_p_values`, then `adjusted`) of a model's WITH clause: the family
    is every row of `relation` with a `p_value` (m of them); the rows are
    ranked by p ascending (ties in `tie_order`, which leaves tied p-values
    with one q-value), then q = min over ranks >= own of p * m / rank, capped
    at 1, in `q_value_exact`. Rows without a p-value keep a null rank and q.
    docs/metrics.md, "False discoveries"; tests/dbt/test_statistics_oracle.py
    checks it against statsmodels' multipletests(method="fdr_bh").
    `partition_by` (SQL column list, default none: one family of every row)
    makes one family per value of those columns (alert_evaluations: one per
    evaluation day, every rule and subject of the day together).
-#}
{% macro benjamini_hochberg_ctes(relation, tie_order, p_value='p_value_exact', partition_by=none) -%}
{%- set partition = ('partition by ' ~ partition_by ~ ' ') if partition_by else '' -%}
ranked_p_values as (
    select
        *,
        case
            when {{ p_value }} is not null
                then row_number() over ({{ partition }}order by {{ p_value }} asc nulls last, {{ tie_order }})
        end as p_value_rank,
        count({{ p_value }}) over ({{ partition | trim }}) as tests_in_family
    from {{ relation }}
),

adjusted as (
    select
        *,
        case
            when {{ p_value }} is not null
                then least(
                    1.0e0,
                    min({{ p_value }} * tests_in_family / p_value_rank) over (
                        {{ partition }}order by p_value_rank desc nulls first
                        rows between unbounded preceding and current row
                    )
                )
        end as q_value_exact
    from ranked_p_values
)
{%- endmacro %}

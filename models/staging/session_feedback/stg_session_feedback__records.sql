-- One row per end-of-session feedback record (raw.session_feedback, already
-- unique on id): the upstream `source` becomes `surface`, enums lower-cased.
-- modality: `text` when upstream wrote none (the loader's default), 'unknown'
-- on rows landed before the loader read it (their channel was not read).

with source as (
    select * from {{ source('session_feedback', 'session_feedback') }}
),

normalised as (
    select
        *,
        lower(trim(label)) as label_normalised,
        lower(trim(source)) as surface_normalised,
        coalesce(lower(trim(modality)), 'unknown') as modality_normalised
    from source
),

renamed as (
    select
        id as feedback_id,
        session_id_opaque,
        user_id_or_null as user_id,
        recorded_at,
        recorded_date,
        -- `label` is the contract's name (a keyword to sqlfluff, not reserved in DuckDB or Spark)
        label_normalised as label,  -- noqa: RF04
        turn_count_at_end,
        surface_normalised as surface,
        modality_normalised as modality,
        schema_version,
        insertion_order,
        _loaded_at as loaded_at,
        _load_id as load_id,
        _source_uri as source_uri
    from normalised
)

select * from renamed

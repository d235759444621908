"""Operations on the warehouse file: dbt builds, retention purges, user erasure, the nightly job."""

"""Calibration: how far a judge agrees with people, and rankings with honest uncertainty.

Pure statistics on arrays and records (numpy, scipy, statsmodels, krippendorff); no I/O and no
DSPy. Every figure carries a cluster-bootstrap interval: clusters (conversations) are resampled
with one ``(B × C)`` weights matrix shared by all models or raters (a paired bootstrap), and
results record the interval method actually used, ``B``, the seed and the Monte-Carlo error.

Main entry points
-----------------
Bootstrap engine
    ``bootstrap_weights``, ``ClusterSums``, ``paired_cluster_bootstrap``, ``bootstrap_means``,
    ``bootstrap_statistic``, ``cluster_robust_covariance``, ``interval_endpoints``; bounded
    scores (pass/fail, ceilings): ``bounds=`` on the means, ``infer_bounds``,
    ``interval_warnings`` (see ``_bounded``).
Agreement
    ``pair_agreement`` (raw, Cohen's κ ×3, Spearman, Kendall τ-b, Pearson, MAE),
    ``krippendorff_alpha``, ``fleiss_kappa`` (any number of ratings per item), ``gwet_ac1``,
    ``intraclass_correlation`` (Shrout & Fleiss forms), ``pairwise_matrix``, ``group_agreement``,
    ``human_ceiling``, ``alpha_with_judge``, ``alternative_annotator_test``,
    ``preference_agreement``, ``judge_preferences_from_scores``, ``position_bias``,
    ``length_effect``, ``ppi_leaderboard`` (prediction-powered inference, PPI++),
    ``binary_agreement`` (pass/fail judges: TPR, TNR, precision, NPV, balanced accuracy,
    leniency), ``corrected_pass_rates`` (Rogan–Gladen, PPI++ beside it), and ``calibrate``
    (all of it per dimension, for the CLI).
Probability forecasts
    ``probability_calibration`` (Brier score, ECE, reliability diagram, each with a cluster
    interval), ``reliability_diagram``; point helpers ``brier_score``, ``binary_brier_score``,
    ``expected_calibration_error``, ``probability_scores``.
Rankings
    ``leaderboard`` (and ``leaderboard_from_sums``; both accept a shared ``weights`` draw),
    ``bradley_terry``, ``rank_confidence_sets``, ``kendall_tau_rankings``, ``kendalls_w``,
    ``kendalls_w_rankings`` (W with a paired bootstrap interval).
Rendering
    ``calibration_markdown``, ``preference_markdown``, ``leaderboard_markdown`` (strings).
Adapters
    ``ratings_to_table``, ``one_label_per_rater`` (the rule for duplicate labels),
    ``judgments_to_ratings``, ``judgments_to_scores``, ``judgments_scale``,
    ``judgments_to_preferences``, ``judgments_both_orders``.
"""

from attune_judge.calibration._results import IntervalMethod, JoinReport, Metric, ResultModel
from attune_judge.calibration._sensitivity_results import (
    CriterionShift,
    ModelScore,
    PairComparison,
    SensitivityAnalysis,
    VarianceComponent,
    VarianceDecomposition,
    VariantRanking,
    VariantVerdict,
)
from attune_judge.calibration.agreement._alt_test import alternative_annotator_test, fdr_adjust
from attune_judge.calibration.agreement._baseline_agreement import (
    BaselineAgreement,
    baseline_agreement,
    weighted_spearman,
)
from attune_judge.calibration.agreement._behaviour_agreement import (
    behaviour_agreement,
    behaviour_metrics,
    is_behaviour_dimension,
    judgments_to_behaviour_ratings,
)
from attune_judge.calibration.agreement._binary import (
    BinaryAgreement,
    binary_agreement,
    binary_value,
)
from attune_judge.calibration.agreement._icc import intraclass_correlation
from attune_judge.calibration.agreement._judgments import (
    judgments_both_orders,
    judgments_scale,
    judgments_to_preferences,
    judgments_to_ratings,
    judgments_to_scores,
)
from attune_judge.calibration.agreement._pairwise import PAIR_METRICS, pair_agreement
from attune_judge.calibration.agreement._panel import PanelAgreement, panel_agreement
from attune_judge.calibration.agreement._raters import (
    HumanCeiling,
    aggregate_raters,
    alpha_with_judge,
    group_agreement,
    human_ceiling,
    pairwise_matrix,
)
from attune_judge.calibration.agreement._reliability import (
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha,
)
from attune_judge.calibration.agreement._report import CalibrationReport, JudgeReport, calibrate
from attune_judge.calibration.agreement._table import (
    RatingTable,
    one_label_per_rater,
    ratings_to_table,
)
from attune_judge.calibration.ppi._corrected import (
    MIN_YOUDEN,
    CorrectedPassRates,
    CorrectedRate,
    CorrectionWarning,
    corrected_pass_rates,
    rogan_gladen,
)
from attune_judge.calibration.ppi._ppi_plus import (
    PPIEstimate,
    PPILeaderboard,
    ppi_columns,
    ppi_leaderboard,
    ppi_plus_mean,
)
from attune_judge.calibration.preference._bias import (
    LengthEffectComparison,
    PositionBias,
    compare_length_effects,
    compare_rating_length_effects,
    length_effect,
    position_bias,
)
from attune_judge.calibration.preference._preference import (
    judge_preferences_from_scores,
    preference_agreement,
)
from attune_judge.calibration.preference._preference_baselines import compare_preferences
from attune_judge.calibration.probability._probability import (
    ProbabilityScores,
    binary_brier_score,
    brier_score,
    expected_calibration_error,
    probability_calibration,
    probability_scores,
    reliability_diagram,
)
from attune_judge.calibration.ranking._bradley_terry import (
    BradleyTerryResult,
    bradley_terry,
    fit_bradley_terry_batch,
    win_tables,
)
from attune_judge.calibration.ranking._leaderboard import (
    Leaderboard,
    LeaderboardRow,
    leaderboard,
    leaderboard_from_sums,
)
from attune_judge.calibration.ranking._length_control import (
    LengthControlledResult,
    length_controlled_winrates,
)
from attune_judge.calibration.ranking._length_means import (
    LengthControlledMeans,
    length_controlled_means,
)
from attune_judge.calibration.ranking._rank_agreement import (
    KendallW,
    kendall_tau_rankings,
    kendalls_w,
    kendalls_w_rankings,
    tau_b_rows,
)
from attune_judge.calibration.ranking._ranksets import (
    rank_confidence_sets,
    ranks_of,
)
from attune_judge.calibration.ranking._style import (
    STYLE_FEATURES,
    StyleControlledResult,
    style_bradley_terry,
    style_features,
)
from attune_judge.calibration.render._families import (
    behaviour_markdown,
    corrected_pass_rates_markdown,
    ppi_leaderboard_markdown,
    preference_comparison_markdown,
)
from attune_judge.calibration.render._markdown import (
    binary_markdown,
    calibration_markdown,
    fmt_estimate,
    fmt_metric,
    fmt_num,
    leaderboard_markdown,
    preference_markdown,
    to_float,
)
from attune_judge.calibration.resampling._bootstrap import (
    MIN_CLUSTERS,
    bootstrap_statistic,
    bootstrap_weights,
    few_clusters_warning,
    interval_endpoints,
    no_claim_reason,
)
from attune_judge.calibration.resampling._bounded import check_level, interval_warnings
from attune_judge.calibration.resampling._differences import difference_intervals
from attune_judge.calibration.resampling._means import (
    PairedBootstrapResult,
    bootstrap_means,
    paired_cluster_bootstrap,
)
from attune_judge.calibration.resampling._ratio import (
    ClusterSums,
    cluster_robust_covariance,
    ratio_replicates,
)

__all__ = [
    "MIN_CLUSTERS",
    "MIN_YOUDEN",
    "PAIR_METRICS",
    "STYLE_FEATURES",
    "BaselineAgreement",
    "BinaryAgreement",
    "BradleyTerryResult",
    "CalibrationReport",
    "ClusterSums",
    "CorrectedPassRates",
    "CorrectedRate",
    "CorrectionWarning",
    "CriterionShift",
    "HumanCeiling",
    "IntervalMethod",
    "JoinReport",
    "JudgeReport",
    "KendallW",
    "Leaderboard",
    "LeaderboardRow",
    "LengthControlledMeans",
    "LengthControlledResult",
    "LengthEffectComparison",
    "Metric",
    "ModelScore",
    "PPIEstimate",
    "PPILeaderboard",
    "PairComparison",
    "PairedBootstrapResult",
    "PanelAgreement",
    "PositionBias",
    "ProbabilityScores",
    "RatingTable",
    "ResultModel",
    "SensitivityAnalysis",
    "StyleControlledResult",
    "VarianceComponent",
    "VarianceDecomposition",
    "VariantRanking",
    "VariantVerdict",
    "aggregate_raters",
    "alpha_with_judge",
    "alternative_annotator_test",
    "baseline_agreement",
    "behaviour_agreement",
    "behaviour_markdown",
    "behaviour_metrics",
    "binary_agreement",
    "binary_brier_score",
    "binary_markdown",
    "binary_value",
    "bootstrap_means",
    "bootstrap_statistic",
    "bootstrap_weights",
    "bradley_terry",
    "brier_score",
    "calibrate",
    "calibration_markdown",
    "check_level",
    "cluster_robust_covariance",
    "compare_length_effects",
    "compare_preferences",
    "compare_rating_length_effects",
    "corrected_pass_rates",
    "corrected_pass_rates_markdown",
    "difference_intervals",
    "expected_calibration_error",
    "fdr_adjust",
    "few_clusters_warning",
    "fit_bradley_terry_batch",
    "fleiss_kappa",
    "fmt_estimate",
    "fmt_metric",
    "fmt_num",
    "group_agreement",
    "gwet_ac1",
    "human_ceiling",
    "interval_endpoints",
    "interval_warnings",
    "intraclass_correlation",
    "is_behaviour_dimension",
    "judge_preferences_from_scores",
    "judgments_both_orders",
    "judgments_scale",
    "judgments_to_behaviour_ratings",
    "judgments_to_preferences",
    "judgments_to_ratings",
    "judgments_to_scores",
    "kendall_tau_rankings",
    "kendalls_w",
    "kendalls_w_rankings",
    "krippendorff_alpha",
    "leaderboard",
    "leaderboard_from_sums",
    "leaderboard_markdown",
    "length_controlled_means",
    "length_controlled_winrates",
    "length_effect",
    "no_claim_reason",
    "one_label_per_rater",
    "pair_agreement",
    "paired_cluster_bootstrap",
    "pairwise_matrix",
    "panel_agreement",
    "position_bias",
    "ppi_columns",
    "ppi_leaderboard",
    "ppi_leaderboard_markdown",
    "ppi_plus_mean",
    "preference_agreement",
    "preference_comparison_markdown",
    "preference_markdown",
    "probability_calibration",
    "probability_scores",
    "rank_confidence_sets",
    "ranks_of",
    "ratings_to_table",
    "ratio_replicates",
    "reliability_diagram",
    "rogan_gladen",
    "style_bradley_terry",
    "style_features",
    "tau_b_rows",
    "to_float",
    "weighted_spearman",
    "win_tables",
]

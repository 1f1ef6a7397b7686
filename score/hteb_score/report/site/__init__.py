"""The docs site's pages made from committed comparisons: findings tables and the leaderboard (see hteb_score.report)."""

"""Session model -> rich `Text`: entries, their parts, plots; never markup."""

"""The dialogue policy: one typed decision per turn (see policy.py)."""

from dialogue.policy.decision import (Clarify, ClarifyVerdict, Decision, NoAnswer, PlanQueries,
                                      QuestionReading, Resume, UnderstoodTurn)
from dialogue.policy.gate import AmbiguityGate, AntecedentGate, ClarifyGate, ask_which_antecedent
from dialogue.policy.policy import DialoguePolicy, earlier_focus, links_trace

__all__ = ["AmbiguityGate", "AntecedentGate", "ask_which_antecedent", "Clarify", "ClarifyGate", "ClarifyVerdict", "Decision",
           "DialoguePolicy", "NoAnswer", "PlanQueries", "QuestionReading", "Resume",
           "UnderstoodTurn", "earlier_focus", "links_trace"]

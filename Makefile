# The two commands of the README. Both do all the set-up they need.
.PHONY: demo test

demo:
	scripts/demo.sh

test:
	scripts/test.sh

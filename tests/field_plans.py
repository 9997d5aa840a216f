"""The 256-bit field engines driven as hebatch.ntt.fields drives them: each transform gets the launch
plan of its input (hebatch.ntt.launch.field_plan), with the plan options a test asks for."""

from hebatch.ntt.launch import field_plan


class Planned:
    """`engine` with forward/inverse given the plan of their input; every other attribute is the engine's."""

    def __init__(self, engine, **options):
        self.engine, self.options = engine, options

    def plan(self, x):
        return field_plan(x.shape[1], x.shape[0], **self.options)

    def forward(self, x, field, root, input_order="natural", output_order="natural"):
        return self.engine.forward(x, field, root, input_order, output_order, plan=self.plan(x))

    def inverse(self, y, field, root, input_order="natural", output_order="natural"):
        return self.engine.inverse(y, field, root, input_order, output_order, plan=self.plan(y))

    def __getattr__(self, name):
        return getattr(self.engine, name)
